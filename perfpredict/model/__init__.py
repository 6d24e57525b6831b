"""The runtime model: training (:mod:`perfpredict.model.fit`) apart from answering
(:mod:`perfpredict.model.runtime`), which an estimate imports alone."""

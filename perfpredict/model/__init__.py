"""The runtime model and what it is made of: series and their keys (:mod:`.series`), the
entry a trained predictor keeps of each series (:mod:`.entry`), training
(:mod:`.fit`) apart from answering (:mod:`.runtime`), which an estimate imports alone."""

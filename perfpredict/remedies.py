"""What to do next, as a message names it to both of its readers: the command a user of
the CLI runs, then the call a library caller makes ("'perfpredict train' or, from
Python, perfpredict.train.train(store)").

The library raises the same error to both, so a message naming only ``perfpredict
train`` sent a notebook to a shell for what ``perfpredict.train.train(store)`` does.
"""

from __future__ import annotations

#: Train the store's predictors.
TRAIN = "'perfpredict train' or, from Python, perfpredict.train.train(store)"
#: Store runs of one's own.
INGEST = ("'perfpredict ingest' or, from Python, perfpredict.ingest.ingest_file(store, "
          "FORMAT, FILE)")
#: Store the bundled data sets.
LOAD_DATASETS = "'perfpredict datasets load' or, from Python, perfpredict.datasets.ingest(store)"

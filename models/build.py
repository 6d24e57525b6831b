"""Train the predictor shipped in ``models/predictor.json`` on the bundled data sets.

Run by maintainers after the data sets or the predictor change:
``python models/build.py``. The card ``predictor.md`` records what it was trained on.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main() -> None:
    from perfpredict import datasets
    from perfpredict.store import open_store
    from perfpredict.store.artifacts import load_latest_artifact
    from perfpredict.train import train

    with tempfile.TemporaryDirectory() as tmp:
        url = f"sqlite:///{tmp}/bundled.db"
        store = open_store(url)
        datasets.ingest(store)
        report = train(store)
        doc = load_latest_artifact(url)
        store.dispose()
    assert doc is not None
    (HERE / "predictor.json").write_text(json.dumps(doc, sort_keys=True, allow_nan=False))
    print(json.dumps(report.as_dict(), indent=2))


if __name__ == "__main__":
    main()

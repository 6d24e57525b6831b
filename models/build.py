"""Train the predictor shipped in ``models/predictor.json`` on the bundled data sets.

Run by maintainers after the data sets or the predictor change:
``python models/build.py``. The card ``predictor.md`` records what it was trained on.

``python models/build.py --relayout`` rewrites the shipped predictor in the layout this
perfpredict writes (e.g. with the boosters' tree tables) from its own learned state,
without retraining, so that its predictions stay exactly what they were.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--relayout", action="store_true",
                        help="rewrite the shipped predictor in the current layout, untrained")
    if parser.parse_args().relayout:
        relayout()
    else:
        build()


def relayout() -> None:
    """The shipped predictor written again from its learned state; every other part of
    the document (series entries, training card, creation time) is kept as it is, the
    entries written as texts by application (:data:`perfpredict.artifact.SERIES_TEXTS`)."""
    from perfpredict import artifact
    from perfpredict.model.runtime import RuntimeModel

    path = HERE / "predictor.json"
    doc = artifact.read_file(path)
    predictor = RuntimeModel.from_dict(doc["predictor"]).to_dict()
    # read back, the new layout holds exactly the state read from the old one
    assert RuntimeModel.from_dict(predictor).to_dict() == predictor
    body = {k: v for k, v in doc.items() if k != "sha256"}
    if artifact.SERIES in body:  # the entries as texts by application, as build writes
        body = artifact.with_series_texts(body)
    doc = artifact.seal({**body, "predictor": predictor})
    path.write_text(artifact.to_text(doc))
    (HERE / "predictor.md").write_text(model_card(doc))
    print(f"rewrote {path} (sha256 {doc['sha256']})")


def build() -> None:
    from perfpredict import artifact, datasets
    from perfpredict.store import open_store
    from perfpredict.store.artifacts import DIGESTS, load_latest_runtime
    from perfpredict.train import train

    with tempfile.TemporaryDirectory() as tmp:
        url = f"sqlite:///{tmp}/bundled.db"
        with open_store(url) as store:
            datasets.ingest(store)
            report = train(store)
        found = load_latest_runtime(url)
        assert found is not None and found[1] is not None
        # the shipped file holds its series entries, each application's as texts
        body = {k: v for k, v in found[0].items() if k not in ("sha256", DIGESTS)}
        doc = artifact.seal(artifact.with_series_texts({**body, artifact.SERIES: found[1].all()}))
    (HERE / "predictor.json").write_text(artifact.to_text(doc))
    (HERE / "predictor.md").write_text(model_card(doc))
    print(json.dumps(report.as_dict(), indent=2))


def model_card(doc: dict) -> str:  # type: ignore[type-arg]
    """The human-readable card shipped beside the artifact."""
    from perfpredict import artifact

    entries = artifact.series_entries(doc)
    predictor, training = doc["predictor"], doc["training"]
    corrections = ", ".join(f"{kind}: {'on' if on else 'off'}"
                            for kind, on in predictor["apply_correction"].items())
    calibration = ", ".join(f"{kind}: {way}"
                            for kind, way in predictor["calibrated_by"].items())
    metrics = predictor["metrics"]
    return f"""# Model card: bundled runtime predictor (`predictor.json`)

- **What**: perfpredict's hybrid runtime predictor (scaling law x learned overhead
  coefficient, distance-aware conformal intervals), artifact format version
  {doc["format_version"]}, perfpredict {doc["perfpredict_version"]}.
- **Trained on**: the bundled data sets (`perfpredict datasets list`): {training["n_runs"]}
  runs, {training["n_series"]} series with two or more scales, of which
  {predictor["n_series"]} (three or more scales) taught the overhead regressor through
  {predictor["n_examples"]} nested-extrapolation examples.
- **Data fingerprint** (sha256 of the series' scales and medians):
  `{training["data_fingerprint"]}`
- **Base**: {predictor["base"]} (the log-space mean of Amdahl, Amdahl + log and the power
  law, and beyond a strong-scaling series' measured range the slope drift pooled from the
  training series, the mean moved onto the runs at its largest measured scale; there,
  where other series of the application and input measured both
  scales, the estimate weighs their median speed-up half against the hybrid's own, read
  from the artifact's series entries). **Learned correction**: {corrections} (ramped in
  over a series' last spacing beyond its largest measured scale).
  **Intervals calibrated by**: {calibration}; noise floor from
  {predictor["noise_floor"]["n_series"]} series with repeats; beyond the measured range
  no lower than ideal strong scaling for fixed work
  ({sum(e["fixed_work"] and not e["weak"] for e in entries)} of the
  {len(entries)} series; MLPerf's time-to-train, Training and HPC, is not fixed work).
- **Nested-extrapolation mean |log error|** (cross-fitted by series): plain law
  {metrics["nested_mean_abs_log_error_plain"]:.3f}, hybrid
  {metrics["nested_mean_abs_log_error_hybrid"]:.3f}.
- **Checksum**: `{doc["sha256"]}` (sha256 of the canonical JSON without this field).
- **Use**: `perfpredict estimate` falls back to it when the store holds no trained
  predictor. It only knows the applications and systems of the bundled data; train on your
  own store (`perfpredict train`) for anything else.
- **Accuracy and limits**: see docs/accuracy.md; rebuild with `python models/build.py`.
"""


if __name__ == "__main__":
    main()

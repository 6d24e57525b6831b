"""Trained predictor artifacts shipped with perfpredict (JSON + model card)."""

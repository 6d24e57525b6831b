"""What a runtime prediction is made of: series and their keys (:mod:`.series`), and the
entry a trained predictor keeps of each series (:mod:`.entry`)."""

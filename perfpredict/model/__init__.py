"""What a runtime prediction is made of: series and their keys (:mod:`.series`), the entry
a trained predictor keeps of each series (:mod:`.entry`), and the runtime model, whose
training (:mod:`.fit`) is apart from answering (:mod:`.runtime`), which an estimate
imports alone."""

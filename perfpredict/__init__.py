"""perfpredict: predict HPC job runtimes at unseen scales with calibrated uncertainty."""

__version__ = "0.1.0"

import os

os.environ.setdefault("MNE_DONTWRITE_HOME", "true")
os.environ.setdefault("OMP_NUM_THREADS", "1")

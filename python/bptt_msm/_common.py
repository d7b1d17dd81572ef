"""What the modules of bptt_msm.torch share: the name messages begin
with, the PyTorch generation, the per-thread recomputation flag."""
import threading

import torch

_NAME = "bptt_msm.torch.scan"
_TORCH2 = int(torch.__version__.split(".")[0]) >= 2
# buffers up to this many bytes are copied before step 1 so that a change
# the step makes to them can be seen and replayed; a larger buffer the
# step changes is refused (scan says so) rather than copied every call
_BUFFER_COPY_LIMIT = 64 << 20
_TENSOR_COPY_LIMIT = 64 << 10
# .again: True while a step is being recomputed (bptt_msm.torch.recomputing)
_LOCAL = threading.local()

"""``one_torch_thread``: a module fixture for tests that run many small torch steps in the test
process. Import it into such a module (``from support.torch_threads import one_torch_thread``):
pytest then uses it there, for that module only.

On this project's 2-core machines torch's pool of two threads makes each small step several
times slower than one thread does (its hand-offs cost more than such work); the sandbox's boxes
already run on one (autograder/sandbox/zygote.py). What is computed is the same; the count is
put back for the modules after."""
import pytest


@pytest.fixture(scope="module", autouse=True)
def one_torch_thread():
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)

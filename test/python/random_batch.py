"""Random batches for a Session's data arguments, shared by the CPU tests."""
import numpy as np


def random_batch(session, rows, seed):
    """One batch for `session`'s data arguments, `rows` rows where the batch is dynamic:
    integers below 4 (token ids, class indices) or standard normal floats."""
    rng = np.random.default_rng(seed)
    data = []
    for argument in session.data_arguments:
        shape = tuple(rows if d is None else d for d in argument.shape)
        if np.issubdtype(argument.dtype, np.integer):
            data.append(rng.integers(0, 4, size=shape).astype(argument.dtype))
        else:
            data.append(rng.normal(size=shape).astype(argument.dtype))
    return data

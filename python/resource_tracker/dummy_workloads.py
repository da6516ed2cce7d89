"""dummy_workloads.py - workloads that burn CPU for a while, for examples and tests."""

import os
from random import random
from time import time


def cpu_single(duration: float = 1) -> None:
    """Multiplies random numbers on one core for duration seconds.

    >>> cpu_single(0.01)
    """
    end = time() + duration
    while time() < end:
        random() * random()


def cpu_multi(duration: float = 1, ncores: int = None) -> None:
    """Runs cpu_single on ncores cores at once (processes of a multiprocessing pool) for
    duration seconds. ncores defaults to every logical core.

    >>> cpu_multi(duration=0.01, ncores=2)
    """
    from multiprocessing import Pool

    if ncores is None:
        ncores = os.cpu_count() or 1
    with Pool(ncores) as pool:
        pool.map(cpu_single, [duration] * ncores)

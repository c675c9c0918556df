import statistics

import numpy as np
import pytest

from paperworks.pruning_geometry import PolynomialTask, SuccessorTask


def test_successor_task_answers_the_median_successor():
    task = SuccessorTask(n_fillers=5, id_fillers=3, ood_fillers=7, n_digits=3)
    for split, fillers in (("id", 3), ("ood", 7)):
        ids, ans = task.sample(200, split, np.random.default_rng(0))
        assert ids.shape == (200, fillers + 3 + 2) and ans.shape == (200,)
        for row, a in zip(ids.tolist(), ans.tolist()):
            assert row[0] == task.bos and row[-1] == task.eq
            digits = [t for t in row[1:-1] if t < 10]
            fill = [t for t in row[1:-1] if t >= 10]
            assert len(digits) == 3 and all(10 <= t < 15 for t in fill)
            assert a == (int(statistics.median(digits)) + 1) % 10
    # every digit position is used, and the answer is not the successor of one fixed slot
    ids, ans = task.sample(400, "id", np.random.default_rng(1))
    first = ids[:, 1:-1][ids[:, 1:-1] < 10].reshape(400, 3)[:, 0]
    assert (ans.numpy() != (first.numpy() + 1) % 10).mean() > 0.3


def test_successor_task_one_digit_and_bad_input():
    task = SuccessorTask(n_digits=1)
    ids, ans = task.sample(50, "id", np.random.default_rng(2))
    digit = ids[ids < 10]
    assert digit.shape == (50,) and (ans == (digit + 1) % 10).all()
    with pytest.raises(ValueError, match="n_digits: expected an odd"):
        SuccessorTask(n_digits=2)
    with pytest.raises(ValueError, match="ood_fillers"):
        SuccessorTask(id_fillers=4, ood_fillers=4)
    with pytest.raises(ValueError, match="split"):
        task.sample(4, "test")
    with pytest.raises(ValueError, match="n"):
        task.sample(0)


def test_polynomial_task_shift():
    task = PolynomialTask(n_context=4)
    tok, y = task.sample(300, "id", np.random.default_rng(0))
    assert tok.shape == (300, 9, 2) and y.shape == (300, 5)
    assert tok[:, 0::2, 0].abs().max() <= 1.0 and (tok[:, 0::2, 1] == 1).all()
    assert (tok[:, 1::2, 0] == y[:, :4]).all()
    ood, _ = task.sample(300, "ood", np.random.default_rng(0))
    assert ood[:, 0::2, 0].abs().max() > 1.2
    with pytest.raises(ValueError, match="base"):
        PolynomialTask(degree=3)

import numpy as np
import pytest

from graphleaks.data.score_files import check_scores, load_scores
from graphleaks.errors import DataError

P = np.array([[0.9, 0.1], [0.2, 0.8], [0.5, 0.5]])


def test_formats_agree(tmp_path):
    ids, y = np.array([4, 0, 7]), np.array([0, 1, 1])
    np.savez(tmp_path / "s.npz", scores=P, labels=y, node_ids=ids)
    (tmp_path / "s.csv").write_text("node_id,label,p0,p1\n" + "".join(
        f"{i},{lab},{a},{b}\n" for i, lab, (a, b) in zip(ids, y, P, strict=True)))
    np.save(tmp_path / "s.npy", P)
    (tmp_path / "y.csv").write_text("4,0\n0,1\n7,1\n")
    (tmp_path / "ids.txt").write_text("4\n0\n7\n")
    loaded = [load_scores(tmp_path / "s.npz"), load_scores(tmp_path / "s.csv"),
              load_scores(tmp_path / "s.npy", labels=tmp_path / "y.csv",
                          node_ids=tmp_path / "ids.txt")]
    for ns in loaded:
        assert ns.node_ids.tolist() == [4, 0, 7] and ns.labels.tolist() == [0, 1, 1]
        np.testing.assert_allclose(ns.scores, P)


@pytest.mark.parametrize("scores,labels,kw,match", [
    (np.array([[np.nan, 1.0], [0.5, 0.5]]), [0, 1], {}, "NaN"),
    (np.array([0.5, 0.5]), [0], {}, "2-D"),
    (np.ones((2, 1)), [0, 0], {}, "2-D"),
    (P, [0, 1], {}, "labels of shape"),
    (P, [0, 2, 1], {}, r"0\.\.1"),
    (P, [0, -1, 1], {}, r"0\.\.1"),
    (P, [0, 1, 1], {"node_ids": [1, 1, 2]}, "more than one"),
    (P, [0, 1, 1], {"node_ids": [1, -1, 2]}, "negative"),
    (np.array([[2.0, -1.0], [0.3, 0.3]]), [0, 1], {}, r"\[0, 1\]"),
    (np.array([[0.3, 0.3], [0.5, 0.5]]), [0, 1], {}, "sum to 1"),
    (np.array([[0.3, 0.3], [0.5, 0.5]]), [0, 1], {"output": "log_probabilities"}, "<= 0"),
    (P, [0, 1, 1], {"output": "softmax"}, "unknown score kind"),
])
def test_bad_scores(scores, labels, kw, match):
    with pytest.raises(DataError, match=match) as exc:
        check_scores(scores, np.asarray(labels), **kw)
    assert "\n" not in str(exc.value)


def test_logits_accept_any_finite_values():
    ns = check_scores(np.array([[3.0, -2.0], [10.0, 40.0]]), np.array([0, 1]), output="logits")
    assert ns.num_classes == 2


def test_bare_npy_needs_labels_and_pickle_refused(tmp_path):
    np.save(tmp_path / "s.npy", P)
    with pytest.raises(DataError, match="--labels"):
        load_scores(tmp_path / "s.npy")
    np.savez(tmp_path / "o.npz", scores=np.array([object()]), labels=np.array([0]))
    with pytest.raises(DataError, match="pickled"):
        load_scores(tmp_path / "o.npz")
    with pytest.raises(DataError, match="does not exist"):
        load_scores(tmp_path / "missing.csv")

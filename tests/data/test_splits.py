import numpy as np
import pytest
import torch

from graphleaks.data.splits import MembershipSplit, SplitConfig
from graphleaks.errors import DataError, InvalidConfigError


def test_parts_are_disjoint_and_cover(seed):
    s = MembershipSplit.draw(97, seed=seed)
    allids = np.concatenate([s.train, s.val, s.test, s.aux])
    assert sorted(allids.tolist()) == list(range(97))


def test_same_seed_same_split_and_different_seed_differs():
    a, b, c = (MembershipSplit.draw(200, seed=s) for s in (1, 1, 2))
    assert np.array_equal(a.train, b.train)
    assert not np.array_equal(a.train, c.train)


def test_round_trip(tmp_path):
    s = MembershipSplit.draw(50, SplitConfig(kind="transductive"), seed=3)
    s.save(tmp_path / "split.json")
    t = MembershipSplit.load(tmp_path / "split.json")
    assert t.kind == "transductive" and np.array_equal(s.test, t.test) and t.seed == 3


def test_inductive_drops_cross_part_edges():
    s = MembershipSplit.draw(6, SplitConfig(train_frac=0.5, val_frac=0.0, test_frac=0.5), seed=0)
    full = torch.tensor([[i for i in range(6) for j in range(6) if i != j],
                         [j for i in range(6) for j in range(6) if i != j]])
    parts = s.part_ids()
    kept = s.training_edges(full)
    assert kept.size(1) > 0
    assert (parts[kept[0].numpy()] == parts[kept[1].numpy()]).all()
    assert torch.equal(MembershipSplit.draw(6, SplitConfig(kind="transductive"),
                                            seed=0).training_edges(full), full)


@pytest.mark.parametrize("cfg", [
    SplitConfig(train_frac=0.0), SplitConfig(kind="other"),
    SplitConfig(train_frac=0.6, test_frac=0.6),
])
def test_invalid_config(cfg):
    with pytest.raises(InvalidConfigError):
        MembershipSplit.draw(100, cfg, seed=0)


def test_malformed_record_rejected():
    rec = MembershipSplit.draw(10, seed=0).to_dict()
    rec["test"] = rec["train"]
    with pytest.raises(DataError, match="overlap"):
        MembershipSplit.from_dict(rec)

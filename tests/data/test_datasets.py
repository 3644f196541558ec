import numpy as np
import pytest
import torch

from graphleaks.data import csbm, fingerprint, from_networkx, load_dataset, load_graph_files
from graphleaks.errors import DataError, InvalidConfigError


def test_bundled_cora_offline(tmp_path, monkeypatch):
    monkeypatch.delenv("GRAPHLEAKS_DATA", raising=False)
    g = load_dataset("cora", cache_dir=tmp_path)
    assert (g.num_nodes, g.num_features, int(g.y.max()) + 1) == (2708, 1433, 7)
    assert g.edge_index.size(1) == 10556


def test_unknown_dataset_names_choices():
    with pytest.raises(InvalidConfigError, match="unknown dataset 'nope'.*cora"):
        load_dataset("nope")


def test_dataset_needing_root(monkeypatch):
    monkeypatch.delenv("GRAPHLEAKS_DATA", raising=False)
    with pytest.raises(DataError, match="data root"):
        load_dataset("citeseer")
    with pytest.raises(DataError, match="does not exist"):
        load_dataset("citeseer", data_root="/nonexistent/dir")


def test_csbm_is_seeded_and_homophilous():
    a, b = csbm(200, seed=5), csbm(200, seed=5)
    assert fingerprint(a) == fingerprint(b) != fingerprint(csbm(200, seed=6))
    same = (a.y[a.edge_index[0]] == a.y[a.edge_index[1]]).float().mean()
    assert same > 0.6


def _write(path, text):
    path.write_text(text)
    return path


def test_files_round_trip(tmp_path):
    e = _write(tmp_path / "e.csv", "src,dst\n0,1\n1,2\n2,3\n")
    np.save(tmp_path / "x.npy", np.eye(4, dtype=np.float32))
    lab = _write(tmp_path / "y.csv", "0\n1\n0\n1\n")
    g = load_graph_files(e, features=tmp_path / "x.npy", labels=lab)
    assert g.num_nodes == 4 and g.edge_index.size(1) == 6 and g.y.tolist() == [0, 1, 0, 1]


@pytest.mark.parametrize("edges,features,match", [
    ("", "1,0\n0,1\n", "empty"),
    ("0,5\n", "1,0\n0,1\n", "node id outside"),
    ("0,a\n", "1,0\n0,1\n", "non-numeric"),
    ("0,1\n", "nan,0\n0,1\n", "NaN"),
])
def test_bad_files(tmp_path, edges, features, match):
    e = _write(tmp_path / "e.csv", edges)
    x = _write(tmp_path / "x.csv", features)
    with pytest.raises(DataError, match=match):
        load_graph_files(e, features=x)


def test_private_column_marks_private_edges(tmp_path):
    e = _write(tmp_path / "e.csv", "source,target,private\n0,1,1\n1,2,0\n2,3,1\n")
    np.save(tmp_path / "x.npy", np.eye(4, dtype=np.float32))
    g = load_graph_files(e, features=tmp_path / "x.npy")
    assert g.edge_index.size(1) == 6
    assert sorted(map(tuple, g.private_edge_index.t().tolist())) == [(0, 1), (1, 0), (2, 3),
                                                                     (3, 2)]
    weights = _write(tmp_path / "w.csv", "source,target,weight\n0,1,5\n1,2,7\n")
    assert "private_edge_index" not in load_graph_files(weights, features=tmp_path / "x.npy")
    bad = _write(tmp_path / "b.csv", "source,target,private\n0,1,2\n1,2,0\n")
    with pytest.raises(DataError, match="private column"):
        load_graph_files(bad, features=tmp_path / "x.npy")


def test_missing_file(tmp_path):
    with pytest.raises(DataError, match="does not exist"):
        load_graph_files(tmp_path / "none.csv", features=tmp_path / "x.csv")


def test_networkx():
    nx = pytest.importorskip("networkx")
    g = nx.path_graph(4)
    for n in g.nodes:
        g.nodes[n]["x"] = [float(n), 1.0]
        g.nodes[n]["y"] = n % 2
    d = from_networkx(g)
    assert d.num_nodes == 4 and d.edge_index.size(1) == 6
    assert torch.equal(d.y, torch.tensor([0, 1, 0, 1]))


@pytest.mark.dataset
@pytest.mark.ci_dataset
def test_data_root_datasets_match_published_counts(data_root, tmp_path):
    cora = load_dataset("cora", data_root=data_root, cache_dir=tmp_path)
    assert fingerprint(cora) == fingerprint(load_dataset("cora", cache_dir=tmp_path))
    cs = load_dataset("citeseer", data_root=data_root, cache_dir=tmp_path)
    assert (cs.num_nodes, cs.edge_index.size(1)) == (3327, 9104)
    fb = load_dataset("ego-facebook", data_root=data_root, cache_dir=tmp_path)
    assert fb.num_nodes == 4039 and fb.edge_index.size(1) == 2 * 88234
    assert fb.y.bincount().tolist() == [1532, 2423, 84]
    lf = load_dataset("lastfm-asia", data_root=data_root, cache_dir=tmp_path)
    assert lf.num_nodes == 7624 and int(lf.y.max()) + 1 == 18
    assert not any(p.name == "processed" for p in data_root.rglob("processed"))


@pytest.mark.parametrize("where", ["target", "edges"])
def test_a_data_root_node_id_far_past_the_graph_is_refused(tmp_path, where):
    # a data root is an input like any other: node 10**15 must not size a 10**15-row array
    base = tmp_path / "root" / "LastFMAsia" / "original"
    base.mkdir(parents=True)
    far = 10**15
    edges = f"node_1,node_2\n0,1\n1,2\n{'2,' + str(far) if where == 'edges' else '2,0'}\n"
    target = f"id,target\n0,0\n1,1\n2,0\n{str(far) + ',1' if where == 'target' else ''}\n"
    (base / "lastfm_asia_edges.csv").write_text(edges)
    (base / "lastfm_asia_target.csv").write_text(target)
    with pytest.raises(DataError, match="outside the graph") as info:
        load_dataset("lastfm-asia", data_root=tmp_path / "root", cache_dir=tmp_path / "c")
    assert str(far) not in str(info.value)

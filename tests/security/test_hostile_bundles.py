"""A bundle is a closed box: checksummed regular files inside it, nothing followed out."""

from __future__ import annotations

import hashlib
import os
import shutil

import pytest

# like /etc/passwd: the first line would pass for a header, the second is quoted on main
SECRET = "root:x:0:0:root:/root:/bin/bash\ndaemon:x:1:1:SECRET-LINE-never-printed"


@pytest.fixture
def secret(hostile):
    """A readable file outside the bundle whose content must never be shown."""
    path = hostile.root / "passwd.csv"
    path.write_text(SECRET + "\n")
    return path


def _audit(hostile, bundle, *extra):
    # one cheap attack: these tests are about the files a bundle audit reads, not the attacks
    return ("audit", "--bundle", bundle, "--out", "rep", "--n-bootstrap", "20", "--attack",
            "confidence_mia", *extra)


@pytest.mark.parametrize("how", ["absolute", "relative"])
def test_manifest_paths_are_never_followed(hostile, bundle, secret, how):
    path = str(secret) if how == "absolute" else "../passwd.csv"

    def edit(m):
        m["files"].pop("graph", None)  # a hostile manifest need not carry the graph inside
        m["dataset"] = {"name": "files", "edges": path, "features": path}
        m["sha256"][path] = hashlib.sha256(secret.read_bytes()).hexdigest()

    hostile.edit_manifest(bundle, edit)
    hostile.refused(*_audit(hostile, bundle), absent=("SECRET-LINE", "daemon"))


def test_user_graph_files_are_given_on_the_command_line(hostile, bundle, graph_dir):
    # a bundle carries the graph it was trained on, checksummed, and re-audits on its own
    r = hostile.run(*_audit(hostile, bundle))
    assert r.exit_code == 0, r.stderr
    # without that file, the manifest's file names are never followed: the user passes them
    hostile.edit_manifest(bundle, lambda m: m["files"].pop("graph"))
    line = hostile.refused(*_audit(hostile, bundle), match="--edges")
    assert "edges.csv" in line
    r = hostile.run(*_audit(hostile, bundle, *hostile.graph_opts(graph_dir)))
    assert r.exit_code == 0, r.stderr


def test_cli_graph_file_content_is_never_quoted(hostile, secret, graph_dir):
    hostile.refused("train", "--out", "b", "--edges", secret, "--features",
                    graph_dir / "x.npy", match="passwd.csv", absent=("SECRET-LINE", "daemon"))


@pytest.mark.parametrize("name", ["weights.safetensors", "split.json", "extras.safetensors"])
def test_every_loaded_file_needs_its_checksum(hostile, bundle, graph_dir, name):
    if name == "extras.safetensors":
        # a manifest listing extras without a checksum for them
        shutil.copy(bundle / "weights.safetensors", bundle / name)
        hostile.edit_manifest(bundle, lambda m: m["files"].__setitem__("extras", name))
    else:
        hostile.edit_manifest(bundle, lambda m: m["sha256"].pop(name))
    hostile.refused(*_audit(hostile, bundle, *hostile.graph_opts(graph_dir)), match="checksum")


def test_tampered_split_is_refused(hostile, bundle, graph_dir):
    split = bundle / "split.json"
    split.write_text(split.read_text().replace('"seed": ', '"seed": 1'))
    hostile.refused(*_audit(hostile, bundle, *hostile.graph_opts(graph_dir)), match="checksum")


def test_weights_symlinked_out_of_the_bundle(hostile, bundle, tiny_bundle, graph_dir):
    outside = hostile.root / "other-weights.safetensors"
    shutil.copy(tiny_bundle / "weights.safetensors", outside)
    (bundle / "weights.safetensors").unlink()
    os.symlink(outside, bundle / "weights.safetensors")
    hostile.refused(*_audit(hostile, bundle, *hostile.graph_opts(graph_dir)),
                    match="symbolic link")


@pytest.mark.parametrize("name", ["../extras.safetensors", "/etc/hostname", "sub/../x"])
def test_files_entries_must_stay_inside(hostile, bundle, graph_dir, name):
    hostile.edit_manifest(bundle, lambda m: m["files"].__setitem__("extras", name))
    hostile.refused(*_audit(hostile, bundle, *hostile.graph_opts(graph_dir)))


@pytest.mark.parametrize(("field", "value"), [
    ("in_dim", "8"), ("in_dim", 8.5), ("in_dim", True), ("out_dim", -3), ("seed", "zero"),
    ("seed", [0]), ("architecture", "gcn"), ("files", []), ("sha256", None),
    ("ledger", "none"), ("defense", 3), ("dataset", "cora"), ("in_dim", 10**12),
])
def test_manifest_fields_are_type_checked(hostile, bundle, graph_dir, field, value):
    hostile.edit_manifest(bundle, lambda m: m.__setitem__(field, value))
    hostile.refused(*_audit(hostile, bundle, *hostile.graph_opts(graph_dir)))


@pytest.mark.parametrize(("value", "match"), [(2, "version 2"), ("1", "integer"),
                                              (None, "integer")])
def test_bundle_schema_version(hostile, bundle, graph_dir, value, match):
    hostile.edit_manifest(bundle, lambda m: m.__setitem__("schema_version", value))
    line = hostile.refused(*_audit(hostile, bundle, *hostile.graph_opts(graph_dir)),
                           match=match)
    if value == 2:
        assert "version 1" in line


def test_hidden_layer_of_a_billion_units_is_refused_without_allocating(hostile, bundle,
                                                                       graph_dir):
    hostile.edit_manifest(bundle, lambda m: m["architecture"].__setitem__("hidden",
                                                                          [10**9]))
    hostile.refused(*_audit(hostile, bundle, *hostile.graph_opts(graph_dir)), match="hidden")


def test_weights_are_checked_against_the_architecture_before_allocating(hostile, bundle,
                                                                         graph_dir):
    # in_dim is not bounded by the spec: the meta-device shape check refuses it unallocated
    hostile.edit_manifest(bundle, lambda m: m.__setitem__("in_dim", 10**9))
    hostile.refused(*_audit(hostile, bundle, *hostile.graph_opts(graph_dir)),
                    match="does not fit")

"""``graphleaks serve BUNDLE``: serve a bundle's model over the endpoint protocol.

Loopback (127.0.0.1) by default; ``--rate-limit`` answers 429 past R queries per second,
``--allow-list`` admits only the node ids of a file (others: 403), ``--credential-env``
requires a bearer token read from that environment variable. Runs until interrupted.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from graphleaks.cli import options as o
from graphleaks.errors import InvalidConfigError

SERVE = "Serve"
BundleArg = Annotated[Path, typer.Argument(metavar="BUNDLE", help="The bundle to serve.",
                                           show_default=False)]
Port = Annotated[int, typer.Option("--port", help="TCP port (0: any free port).",
                                   rich_help_panel=SERVE)]
Host = Annotated[str, typer.Option(
    "--host", help="Interface to bind; loopback by default (anything else exposes the model "
                   "to the network).", rich_help_panel=SERVE)]
RateLimit = Annotated[int | None, typer.Option(
    "--rate-limit", help="Most queries answered per second; past it HTTP 429 with "
                         "Retry-After.", rich_help_panel=SERVE)]
AllowList = Annotated[Path | None, typer.Option(
    "--allow-list", help="Node ids that may be queried, one per line or .npy; others get 403.",
    rich_help_panel=SERVE)]
Outputs = Annotated[str, typer.Option(
    "--outputs", help="What answers hold, comma-separated: labels, posteriors, logits, "
                      "embeddings.", rich_help_panel=SERVE)]
CredentialEnv = Annotated[str | None, typer.Option(
    "--credential-env", help="Require a bearer token, read from this environment variable.",
    rich_help_panel=SERVE)]


def serve(
    bundle: BundleArg, port: Port = 8000, host: Host = "127.0.0.1",
    rate_limit: RateLimit = None, allow_list: AllowList = None,
    outputs: Outputs = "labels,posteriors,logits", credential_env: CredentialEnv = None,
    data_root: o.DataRoot = None,
) -> None:
    """Serve a bundle's model over the endpoint protocol (docs/endpoint-protocol.md)."""
    server = build_server(bundle, port=port, host=host, rate_limit=rate_limit,
                          allow_list=allow_list, outputs=outputs, credential_env=credential_env,
                          data_root=data_root)
    typer.echo(f"serving {bundle.name} at {server.url} (GET /info, POST /query); Ctrl-C stops",
               err=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()


def build_server(bundle: Path, *, port: int = 0, host: str = "127.0.0.1",
                 rate_limit: int | None = None, allow_list: Path | None = None,
                 outputs: str = "labels,posteriors,logits", credential_env: str | None = None,
                 data_root: Path | None = None, **model_kw: Any) -> Any:
    """Check the options, load the bundle and bind the server (not yet serving).

    Raises:
        InvalidConfigError: For a bad option or a credential variable that is not set.
        BundleError: For a bundle that cannot be loaded.
    """
    import os

    from graphleaks.bundles import load_bundle
    from graphleaks.data.node_sets import read_node_ids
    from graphleaks.models.remote import ENDPOINT_OUTPUTS
    from graphleaks.models.remote_server import EndpointModel, EndpointServer

    if not 0 <= port <= 65535:
        raise InvalidConfigError(f"--port must be in 0..65535, not {port}")
    if rate_limit is not None and rate_limit < 1:
        raise InvalidConfigError("--rate-limit must be at least 1 query per second")
    outs = [s.strip() for s in outputs.split(",") if s.strip()]
    bad = [s for s in outs if s not in ENDPOINT_OUTPUTS]
    if bad or not outs:
        raise InvalidConfigError(f"--outputs takes a comma-separated list of: "
                                 f"{', '.join(ENDPOINT_OUTPUTS)}")
    secret = None
    if credential_env is not None:
        secret = os.environ.get(credential_env)
        if not secret:
            raise InvalidConfigError(f"the credential variable {credential_env} is not set (or "
                                     f"empty); export {credential_env}=... before serving")
    target = load_bundle(bundle, data_root=data_root)
    if getattr(target, "task", "node") != "node":  # a link bundle scores pairs, not nodes
        raise InvalidConfigError(f"{bundle} holds a {target.task} target; graphleaks serve "
                                 "serves node classifiers only")
    n = int(target.graph.num_nodes)
    allowed = read_node_ids(allow_list, n) if allow_list is not None else None
    if "embeddings" in outs and not target.iface.embedding_layers:
        raise InvalidConfigError("--outputs embeddings: the bundle's model names no embedding "
                                 "layer; drop embeddings")
    model = EndpointModel(target, outputs=outs, allow_list=None if allowed is None
                          else allowed.tolist(), **model_kw)
    try:
        return EndpointServer(model, host=host, port=port, rate_limit=rate_limit,
                              credential=secret)
    except OSError as exc:
        raise InvalidConfigError(f"cannot listen on {host}:{port} ({exc.strerror or exc}); "
                                 "pick another --port or --host") from None

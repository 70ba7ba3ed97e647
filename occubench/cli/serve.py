"""``occubench serve``: an isolated instance of an environment, over MCP."""

from __future__ import annotations

import argparse

from occubench.cli.run import add_trust_argument, int_range
from occubench.errors import ConfigError


def _serve(args: argparse.Namespace) -> int:
    from occubench.executable.plugin import listed_worlds
    from occubench.executable.registry import world_named
    from occubench.mcp.server import serve, serve_token  # the MCP SDK loads only for this command

    # Refused before the world starts: an address others can reach is served only with a token.
    token = serve_token(args.host, args.token_file) if args.transport == "http" else None
    worlds = listed_worlds(args.worlds_dir, args.trust_world_code)
    try:
        world = world_named(args.env, worlds, args.worlds_dir)
    except ConfigError as exc:
        raise ConfigError(f"--env: {exc}") from None
    env = world.environment()
    try:
        serve(env, args.env, transport=args.transport, host=args.host, port=args.port, token=token,
              allowed_hosts=args.allowed_host)
    finally:
        env.close()
    return 0


def add_parser(sub: argparse._SubParsersAction) -> None:
    serve = sub.add_parser("serve", help="serve an isolated instance of an environment over MCP")
    serve.add_argument("--env", required=True, help="environment name (see `occubench suites`)")
    serve.add_argument("--worlds-dir", metavar="DIR", help="serve a world of DIR (as `occubench synth executable` "
                       "writes them) instead of a built-in one")
    add_trust_argument(serve)
    serve.add_argument("--transport", choices=("stdio", "http"), default="stdio", help="default: stdio")
    serve.add_argument("--host", default="127.0.0.1", help="http transport: address to bind (default: 127.0.0.1)")
    # 8000 is vLLM's default and 8100 the mock server's: the three can run side by side.
    serve.add_argument("--port", type=int_range(1, 65535), default=8200, help="http transport: port (default: 8200)")
    serve.add_argument("--token-file", metavar="FILE",
                       help="http transport: every request must carry 'Authorization: Bearer <the file's text>' "
                       "(default: $OCCUBENCH_SERVE_TOKEN); required for a --host other than loopback")
    serve.add_argument("--allowed-host", action="append", default=[], metavar="NAME",
                       help="http transport, --host other than loopback: a name or address clients reach this "
                       "server by, accepted in the Host header besides --host (repeat for several)")
    serve.set_defaults(func=_serve)

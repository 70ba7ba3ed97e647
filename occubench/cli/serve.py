"""``occubench serve``: a run's episodes to outside agents over MCP or OpenEnv, or an isolated instance of an
environment.

With run flags (``--suite``, ``--data-dir``, the models of the world and the judge...), every episode of the run is
served at its own URL, printed with its task's instruction: an MCP client that connects plays it and ends it by
calling ``submit``; the run folder then holds its verified result, as ``occubench run`` would write it. With
``--protocol openenv``, one OpenEnv server serves them all: each session that resets plays the next episode (or one
of the task it names) and gets the verdict as its reward when it calls ``submit``. With ``--env``, one instance of
an executable world is served over MCP (no episode, no verdict).
"""

from __future__ import annotations

import argparse

from occubench.cli.run import add_arguments, int_range, run_command
from occubench.errors import ConfigError

#: Flags of serve's own: the rest are run flags.
_OWN = ("env", "protocol", "transport", "host", "port", "token_file", "allowed_host", "idle_timeout")


def _serve(args: argparse.Namespace) -> int:
    own = {name: vars(args).pop(name, None) for name in _OWN}
    if own["protocol"] == "openenv":
        return _serve_openenv(args, own)
    if own["env"] is None:
        return _serve_run(args, own)
    if getattr(args, "json", False):
        raise ConfigError("--json prints a run's summary: --env serves one environment, with no run to summarize")
    from occubench.executable.plugin import listed_worlds
    from occubench.executable.registry import world_named
    from occubench.mcp.server import serve, serve_token  # the MCP SDK loads only for this command

    transport = own["transport"] or "stdio"
    # Refused before the world starts: an address others can reach is served only with a token.
    token = serve_token(own["host"], own["token_file"]) if transport == "http" else None
    worlds_dir = getattr(args, "worlds_dir", None)
    if getattr(args, "worlds", None):
        from occubench.config import RunConfig
        from occubench.hub.worlds import with_worlds

        worlds_dir = with_worlds(RunConfig.create({"suite": "executable", "worlds": args.worlds})).suite_options[
            "worlds_dir"]
    worlds = listed_worlds(worlds_dir, getattr(args, "trust_world_code", False))
    try:
        world = world_named(own["env"], worlds, worlds_dir)
    except ConfigError as exc:
        raise ConfigError(f"--env: {exc}") from None
    env = world.environment()
    try:
        serve(env, own["env"], transport=transport, host=own["host"], port=own["port"], token=token,
              allowed_hosts=own["allowed_host"], images=getattr(args, "agent_images", False))
    finally:
        env.close()
    return 0


def _serve_run(args: argparse.Namespace, own: dict[str, object]) -> int:
    if own["transport"] == "stdio":
        raise ConfigError("--transport stdio serves one --env instance: a run's episodes are served over http, "
                          "each at its own URL")
    if getattr(args, "agent", "mcp") != "mcp":
        raise ConfigError("occubench serve plays a run's episodes with outside agents: drop --agent (to start a "
                          "program per episode, use occubench run --agent command:'...')")
    settings = {"agent": "mcp", "serve_host": own["host"], "serve_port": own["port"],
                "serve_token_file": own["token_file"], "serve_allowed_hosts": own["allowed_host"],
                "serve_idle_timeout": own["idle_timeout"]}
    vars(args).update({key: value for key, value in settings.items() if value not in (None, [])})
    return run_command(args)


def _serve_openenv(args: argparse.Namespace, own: dict[str, object]) -> int:
    from occubench.openenv import AGENT, EXECUTOR

    given = [flag for flag, value in (("--env", own["env"]), ("--transport", own["transport"]),
                                      ("--agent", getattr(args, "agent", None)),
                                      ("--agent-model", getattr(args, "agent_model", None)),
                                      ("--executor", getattr(args, "executor", None))) if value is not None]
    if given:
        raise ConfigError(f"--protocol openenv serves a run's episodes over HTTP and WebSocket to OpenEnv clients, "
                          f"which bring their own model: drop {', '.join(given)}")
    settings = {"agent": AGENT, "executor": EXECUTOR, "serve_host": own["host"], "serve_port": own["port"],
                "serve_token_file": own["token_file"], "serve_allowed_hosts": own["allowed_host"],
                "serve_idle_timeout": own["idle_timeout"]}
    vars(args).update({key: value for key, value in settings.items() if value not in (None, [])})
    return run_command(args)


def add_parser(sub: argparse._SubParsersAction) -> None:
    serve = sub.add_parser("serve", help="serve a run's episodes to outside agents over MCP or OpenEnv (or, with "
                           "--env, an isolated instance of an environment)", description=__doc__)
    own = serve.add_argument_group("serving")
    own.add_argument("--protocol", choices=("mcp", "openenv"), default="mcp",
                     help="a run's episodes: mcp (default), each at its own MCP URL; openenv, one OpenEnv server "
                     "(HTTP and WebSocket) whose sessions each play an episode: reset starts one (the next, or one of "
                     "the task_id it names), list_tools and call_tool play it, the submit tool ends it with the "
                     "verdict as reward"),
    own.add_argument("--env", help="serve one instance of this executable environment (see `occubench suites`) "
                     "instead of a run's episodes")
    own.add_argument("--transport", choices=("stdio", "http"),
                     help="--env: stdio (default) or http; a run's episodes: http only")
    own.add_argument("--host", default="127.0.0.1", help="http: address to bind (default: 127.0.0.1)")
    # 8000 is vLLM's default and 8100 the mock server's: the three can run side by side.
    own.add_argument("--port", type=int_range(0, 65535), default=8200,
                     help="http: port (default: 8200; 0: any free port)")
    own.add_argument("--token-file", metavar="FILE",
                     help="http: requests must carry 'Authorization: Bearer <the file's text>' "
                     "(default: $OCCUBENCH_SERVE_TOKEN), required for a --host other than loopback: every request, "
                     "but to a run's MCP episodes on loopback only the listing of them (GET /episodes), which needs "
                     "it (over OpenEnv, every request)")
    own.add_argument("--allowed-host", action="append", default=[], metavar="NAME",
                     help="http, --host other than loopback: a name or address clients reach this server by, "
                     "accepted in the Host header besides --host (repeat for several)")
    own.add_argument("--idle-timeout", type=float, metavar="S",
                     help="a run's episodes: one whose client sent nothing for S seconds is abandoned, recorded "
                     "as an agent error, and an MCP session (an OpenEnv session no WebSocket holds) that sent nothing "
                     "for S seconds is closed (default: 900)")
    add_arguments(serve)
    serve.set_defaults(func=_serve)

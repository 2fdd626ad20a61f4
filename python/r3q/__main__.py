"""python3 -m r3q: the r3q package's command line.

    python3 -m r3q map KIND [FILE]      one task per line, outputs in order
    python3 -m r3q serve [--pickle] MODULE:FUNCTION
    python3 -m r3q [--kind K] [--files P,...] SCRIPT [ARGS]
                                        SCRIPT as the client of r3q.futures
"""
import argparse
import sys

EX_USAGE = 64

# python -m scoop's options: they start or place SCOOP's own workers,
# which an R3Q cluster has already (workerd on each node).
SCOOP_OPTIONS = ("-n", "--hosts", "--host", "--hostfile", "--path", "-p",
                 "--nice", "--verbose", "-v", "--quiet", "-q", "--log",
                 "--pythonpath", "--prolog", "--debug", "--profile",
                 "--backend", "--tunnel", "--external-hostname", "-e",
                 "--python-interpreter")

DESCRIPTION = """\
Run tasks on an R3Q cluster from Python, over libr3q (r3q(3)).

In a program:

  import r3q
  with r3q.Client() as c:            # R3Q_* environment, else the control socket
      c.map("echo", [b"a", b"b"])    # one batch (a generation), outputs in order
      f = c.submit("echo", b"x")     # a concurrent.futures.Future
      f.result(timeout=10)
  r3q.Client(master="head:7411", ca="ca.pem", cert="client.pem",
             key="client.key")      # mutual TLS with a client certificate

  client.map_pickled(kind, objects)  # pickled arguments and results, for
                                     # r3q.serve --pickle; results unpickled
                                     # against an allowlist (r3q.allow();
                                     # r3q.trust_results() lifts it)
  client.executor(kind, codec="pickle")   # a concurrent.futures.Executor;
      # DEAP: toolbox.register("map", client.executor("fit", codec="pickle").map)

Errors: r3q.TaskFailed (the remote error), r3q.ConnectionLost, r3q.Cancelled,
r3q.PayloadTooLarge, r3q.Timeout, r3q.ClientClosed; all are r3q.Error.

On the workers, a Python function as a task kind (workerd.conf(5));
--pickle lets clients with a certificate run their own code there, as
the worker's slot users:

  exec fit = persistent /usr/bin/python3 -m r3q.serve --pickle mymod:evaluate
  env fit = PYTHONPATH=/opt/fitness

A program written for SCOOP (from r3q import futures, shared: futures.map,
mapReduce, shared.setConst...):

  python3 -m r3q [--kind KIND] [--files PATH,...] SCRIPT [ARGS]

runs SCRIPT here as the client, as "python -m scoop SCRIPT" does; the
workers' generic kind "python" (exec python = persistent /usr/bin/python3
-m r3q.serve --any) imports it under another name than __main__ to find
its functions and classes.  Its directory is the tasks' working directory
there; or --files names the files to ship (PATH,...: files and
directories, each at its place relative to the current directory, which
the working directory there then stands for).
SCOOP's own options (-n, --hosts, --hostfile, ...) are refused: the
workers are the cluster's, workerd on each node (r3qctl workers).

pydoc r3q, pydoc r3q.Client, pydoc r3q.futures, pydoc r3q.shared and
pydoc r3q.serve say the rest."""


class _Parser(argparse.ArgumentParser):
    """Usage errors exit 64 (EX_USAGE), as r3qctl's do."""

    def error(self, message):
        self.print_usage(sys.stderr)
        self.exit(EX_USAGE, "%s: error: %s\n" % (self.prog, message))


def _connect(a):
    import r3q
    return r3q.Client(master=a.master, ca=a.ca, cert=a.cert, key=a.key,
                      control=a.control)


def cmd_map(a):
    """One task per input line (without its newline); each output on a
    line, in input order; failures on stderr.  Exit 1 if any failed."""
    import r3q
    f = open(a.file, "rb") if a.file and a.file != "-" else sys.stdin.buffer
    with f:
        lines = [ln.rstrip(b"\n") for ln in f]
    with _connect(a) as c:
        outs = c.map(a.kind, lines, return_exceptions=True)
    rc = 0
    w = sys.stdout.buffer
    for i, o in enumerate(outs):
        if isinstance(o, r3q.Error):
            print("task %d: %s" % (i, o.text), file=sys.stderr)
            w.write(b"\n")
            rc = 1
        else:
            w.write(o.rstrip(b"\n") + b"\n")
    w.flush()
    return rc


def run_script(argv):
    """python3 -m r3q [--kind K] [--files P,...] SCRIPT [ARGS]: SCRIPT
    runs here as __main__, the client of r3q.futures."""
    import os
    import types
    kind = files = None
    i = 0
    while i < len(argv) and argv[i].startswith("--"):
        opt, eq, val = argv[i].partition("=")
        if opt not in ("--kind", "--files"):
            break
        if not eq:
            if i + 1 >= len(argv):
                print("python3 -m r3q: %s needs a value" % opt,
                      file=sys.stderr)
                return EX_USAGE
            i += 1
            val = argv[i]
        if opt == "--kind":
            kind = val
        else:
            files = [f for f in val.split(",") if f]
        i += 1
    if i >= len(argv):
        print("python3 -m r3q: a SCRIPT is needed", file=sys.stderr)
        return EX_USAGE
    script, args = argv[i], argv[i + 1:]
    try:
        with open(script, "rb") as f:
            source = f.read()
    except OSError as e:
        print("python3 -m r3q: %s: %s" % (script, e.strerror),
              file=sys.stderr)
        return EX_USAGE
    from . import futures
    futures._script = os.path.abspath(script)
    futures._files = files
    if kind:
        futures.use(kind=kind)
    try:
        futures._context()          # too many files: say so before running
    except (OSError, ValueError) as e:
        print("python3 -m r3q: %s" % e, file=sys.stderr)
        return 1
    mod = types.ModuleType("__main__")
    mod.__file__ = futures._script
    mod.__builtins__ = __builtins__
    sys.modules["__main__"] = mod
    sys.argv = [script] + args
    sys.path.insert(0, os.path.dirname(futures._script))
    wait = False
    try:
        try:
            exec(compile(source, script, "exec"), mod.__dict__)
        except SystemExit as e:
            wait = e.code in (None, 0)
            raise
        except BaseException as e:
            # As "python3 SCRIPT" shows it: the script's frames only.
            tb = e.__traceback__.tb_next
            sys.excepthook(type(e), e.with_traceback(tb), tb)
            return 130 if isinstance(e, KeyboardInterrupt) else 1
        wait = True
    finally:
        # Futures the script left: waited for if it ended well, as
        # SCOOP's; cancelled if it failed.
        futures.shutdown(wait)
    return 0


def main(argv=None):
    if argv is None:
        argv = sys.argv[1:]
    if argv[:1] == ["serve"]:
        from . import serve
        return serve.main(argv[1:])
    opt = argv[0].partition("=")[0] if argv else ""
    if opt in SCOOP_OPTIONS:
        print("python3 -m r3q: %s is an option of python -m scoop, which "
              "starts its own workers; an R3Q cluster's workers are its "
              "workerd (r3qctl workers lists them): drop it and run "
              "python3 -m r3q [--kind KIND] [--files PATH,...] SCRIPT "
              "[ARGS]" % opt, file=sys.stderr)
        return EX_USAGE
    first = next((a for a in argv if not a.startswith("-")), None)
    if argv and (argv[0] in ("--kind", "--files") or
                 argv[0].startswith(("--kind=", "--files=")) or
                 (first == argv[0] and first not in ("map", "serve"))):
        return run_script(argv)
    p = _Parser(prog="python3 -m r3q", description=DESCRIPTION,
                usage="python3 -m r3q [options] COMMAND ...\n"
                "       python3 -m r3q [--kind KIND] [--files PATH,...] "
                "SCRIPT [ARGS]",
                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--master", help="masterd's host:port (TLS); default "
                   "$R3Q_MASTER, else the control socket")
    p.add_argument("--ca", help="the cluster's CA (PEM)")
    p.add_argument("--cert", help="a client certificate (PEM)")
    p.add_argument("--key", help="its key (PEM)")
    p.add_argument("--control", help="masterd's control socket")
    sub = p.add_subparsers(dest="cmd", metavar="COMMAND")
    m = sub.add_parser("map", help="run KIND on each line of FILE (or "
                       "stdin), print the outputs in order")
    m.add_argument("kind", metavar="KIND")
    m.add_argument("file", metavar="FILE", nargs="?")
    sub.add_parser("serve", add_help=False, help="the worker side, as "
                   "python3 -m r3q.serve (serve --help)")
    a = p.parse_args(argv)
    if a.cmd is None:
        p.error("a command (map, serve) or a SCRIPT is needed; --help "
                "says more")
    import r3q
    try:
        return cmd_map(a)
    except (r3q.Error, OSError) as e:
        print("python3 -m r3q: %s" % e, file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())

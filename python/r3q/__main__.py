"""python3 -m r3q: the r3q package's command line.

    python3 -m r3q map KIND [FILE]      one task per line, outputs in order
    python3 -m r3q serve [--pickle] MODULE:FUNCTION
"""
import argparse
import sys

EX_USAGE = 64

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

  client.map_pickled(kind, objects)  # pickled arguments and results (trusted
                                     # data only), for r3q.serve --pickle
  client.executor(kind, codec="pickle")   # a concurrent.futures.Executor;
      # DEAP: toolbox.register("map", client.executor("fit", codec="pickle").map)

Errors: r3q.TaskFailed (the remote error), r3q.ConnectionLost, r3q.Cancelled,
r3q.PayloadTooLarge, r3q.Timeout, r3q.ClientClosed; all are r3q.Error.

On the workers, a Python function as a task kind (workerd.conf(5)):

  exec fit = persistent /usr/bin/python3 -m r3q.serve --pickle mymod:evaluate
  env fit = PYTHONPATH=/opt/fitness

pydoc r3q, pydoc r3q.Client and pydoc r3q.serve say the rest."""


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


def main(argv=None):
    if argv is None:
        argv = sys.argv[1:]
    if argv[:1] == ["serve"]:
        from . import serve
        return serve.main(argv[1:])
    p = _Parser(prog="python3 -m r3q", description=DESCRIPTION,
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
        p.error("a command is needed (map, serve); --help says more")
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

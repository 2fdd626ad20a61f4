#!/bin/sh
# An exec fitness for R3Q: one process per task.  The payload (standard
# input) is the individual as text, numbers separated by white space; the
# output (standard output) is the sphere function, the sum of x_i^2, as
# text.  In workerd.conf (workerd.conf(5), "TASK KINDS", also for the
# kind's timeout, kill_grace, env and workdir):
#
#	exec sphere = /usr/local/share/r3q/sphere.sh
#
# A non-zero exit fails the task; what it wrote to stderr is in the error.
exec awk '
	{ for (i = 1; i <= NF; i++) { n++; f += $i * $i } }
	END {
		if (n == 0) { print "sphere.sh: no numbers" > "/dev/stderr"; exit 1 }
		printf "%.17g\n", f
	}'

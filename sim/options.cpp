/*
 * r3q-sim's command line (r3q-sim(1)) and the platform it builds: the
 * paper's LAN and WAN grids of Table 1 (Matsuura et al., doc/algorithms.md
 * §1.6), N generated workers on a star, or a SimGrid platform file, and
 * --trace's task times.
 */
#include <cerrno>
#include <cstdio>
#include <cstdlib>

#include <getopt.h>

#include "sim.h"

extern "C" {
#include "frame.h"		/* R3Q_PROTOCOL, for --version */
#include "report/times.h"
}

opts			 O;
std::vector<double>	 trace_ms;
sg4::Host		*master_host;
std::vector<host_info>	 workers;

/* The one-way latency of the route from the master to worker i. */
double
route_lat(size_t i)
{
	std::vector<sg4::Link *> links;
	double			 lat = 0;

	if (workers[i].host == nullptr)
		return (workers[i].lat);	/* the master's link has 0 */
	master_host->route_to(workers[i].host, links, &lat);
	return (lat);
}

/* Table 1 of the paper: speed ratios for 100, 500, 1000 ms tasks. */
static const struct {
	const char	*name;
	double		 s[3];
} table1[] = {
	{ "M1", { 1.00, 1.00, 1.00 } },
	{ "L1", { 2.40, 2.89, 3.37 } },
	{ "L2", { 1.06, 1.00, 1.01 } },
	{ "L3", { 0.68, 0.71, 0.77 } },
	{ "L4", { 0.62, 0.65, 0.72 } },
	{ "L5", { 0.55, 0.42, 0.41 } },
	{ "L6", { 0.37, 0.38, 0.43 } },
	{ "R1", { 2.46, 2.88, 3.37 } },
	{ "W1", { 2.73, 2.69, 3.01 } },
	{ "W2", { 2.46, 2.89, 3.35 } },
	{ "W3", { 2.89, 3.35, 3.90 } },
};

/* Table 1's column for a granularity, as bench/policies picks it. */
static int
table1_col(double work_ms)
{
	return (work_ms <= 100 ? 0 : work_ms <= 500 ? 1 : 2);
}

/* Draw i of stream from d. */
static double
dist_draw(const dist &d, uint64_t stream, uint64_t i)
{
	switch (d.kind) {
	case dist::CONST:
		return (d.a);
	case dist::UNIFORM:
		return (d.a + (d.b - d.a) * rng_uniform(O.ep.seed, stream, i,
		    0));
	case dist::LOGNORMAL:
		return (d.a * exp(d.b * rng_gauss(O.ep.seed, stream, i, 0)));
	case dist::TABLE1: {
		size_t k = (size_t)(rng_uniform(O.ep.seed, RS_TABLE, i, 0) *
		    (sizeof(table1) / sizeof(table1[0])));

		k = std::min(k, sizeof(table1) / sizeof(table1[0]) - 1);
		return (table1[k].s[table1_col(O.work_ms)]);
	}
	}
	return (d.a);
}

/* The median of d (--csv's delay_ms). */
double
dist_median(const dist &d)
{
	switch (d.kind) {
	case dist::UNIFORM:
		return ((d.a + d.b) / 2);
	default:
		return (d.a);
	}
}

/* One host with its own link to the star's centre. */
static sg4::Host *
star_host(sg4::NetZone *z, const std::string &name, double speed,
    uint32_t cpus, double lat_s, sg4::Link *via)
{
	sg4::Host	*h;
	sg4::Link	*l;

	h = z->create_host(name, speed * REF_FLOPS)->set_core_count(cpus)->
	    seal();
	l = z->create_link(name + "-link", O.bandwidth)->set_latency(lat_s)->
	    seal();
	if (via != nullptr)
		z->add_route(h->get_netpoint(), nullptr, nullptr, nullptr,
		    { sg4::LinkInRoute(l), sg4::LinkInRoute(via) }, true);
	else
		z->add_route(h->get_netpoint(), nullptr, nullptr, nullptr,
		    { sg4::LinkInRoute(l) }, true);
	return (h);
}

/*
 * The paper's grids (Table 1, Fig. 4) or N generated workers: a star
 * whose centre is the switch.  workerd's --delay holds each frame for
 * twice the delay each way, so a worker's link has a latency of 2 x
 * delay; the master's link has none.  On the WAN grid W1-W3 reach the
 * switch through R1's gateway link as well.
 */
void
platform_build(void)
{
	sg4::NetZone	*z = sg4::create_star_zone("r3q");
	sg4::Link	*gw = nullptr;
	double		 lat;
	int		 col = table1_col(O.work_ms);
	size_t		 n;

	z->set_property("name", "r3q");
	if (O.platform == "lan" || O.platform == "wan") {
		n = O.platform == "lan" ? 7 : 11;
		master_host = star_host(z, "master", 1, 1, 0, nullptr);
		lat = 2 * O.delay_ms / 1000;
		for (size_t i = 0; i < n; i++) {
			sg4::Link *via = nullptr;

			if (table1[i].name[0] == 'W') {
				if (gw == nullptr)
					gw = z->create_link("R1-gateway",
					    O.bandwidth)->set_latency(5e-5)->
					    seal();
				via = gw;
			}
			host_info hi;
			hi.speed = table1[i].s[col];
			hi.cpus = O.cpus;
			hi.host = star_host(z, table1[i].name, hi.speed,
			    O.cpus, lat, via);
			workers.push_back(hi);
		}
	} else {
		master_host = star_host(z, "master", 1, 1, 0, nullptr);
		for (uint32_t i = 0; i < O.workers; i++) {
			char	 name[32];

			snprintf(name, sizeof(name), "w%u", i);
			host_info hi;
			hi.speed = dist_draw(O.speeds, RS_SPEED, i);
			if (!(hi.speed > 0))
				hi.speed = 1e-3;
			hi.cpus = O.cpus;
			lat = dist_draw(O.latency, RS_LAT, i) / 1000;
			if (!(lat >= 0))
				lat = 0;
			/*
			 * --network analytic needs no SimGrid host for a
			 * generated worker, only its link (fast_routes):
			 * 10,000 hosts were a tenth of a run's time and 30
			 * MiB.
			 */
			if (fast_net) {
				hi.host = nullptr;
				hi.lat = lat;
			} else
				hi.host = star_host(z, name, hi.speed, O.cpus,
				    lat, nullptr);
			workers.push_back(hi);
		}
	}
	z->seal();
}

/*
 * A SimGrid platform file: the host named "master" runs masterd, every
 * other host a workerd with one slot per core; a host's speed in flops
 * over 1 Gf is its speed ratio.
 */
void
platform_file(sg4::Engine &e, const std::string &path)
{
	FILE	*f;

	if ((f = fopen(path.c_str(), "r")) == NULL)
		die(EX_USAGE, "--platform: %s: %s", path.c_str(),
		    strerror(errno));
	fclose(f);
	try {
		e.load_platform(path);
	} catch (const std::exception &ex) {
		die(EX_DATAERR, "%s: not a SimGrid platform: %s", path.c_str(),
		    ex.what());
	}
	master_host = sg4::Host::by_name_or_null("master");
	if (master_host == nullptr)
		die(EX_DATAERR, "%s: no host named 'master' (the host that "
		    "runs masterd)", path.c_str());
	for (auto *h : e.get_all_hosts()) {
		if (h == master_host)
			continue;
		host_info hi;
		hi.host = h;
		hi.speed = h->get_speed() / REF_FLOPS;
		hi.cpus = (uint32_t)h->get_core_count();
		workers.push_back(hi);
	}
	if (workers.empty())
		die(EX_DATAERR, "%s: no worker hosts besides 'master'",
		    path.c_str());
}

/* The usage message, and leave with code. */
[[noreturn]] static void
usage(int code)
{
	fprintf(code ? stderr : stdout,
	    "usage: r3q-sim [--platform lan|wan|FILE] [--delay MS] "
	    "[--master-cost MS]\n"
	    "               [--workers N] [--cpus N] [--speeds DIST] "
	    "[--latency DIST]\n"
	    "               [--bandwidth MBPS] [--network simgrid|analytic] "
	    "[--mtbf D]\n"
	    "               [--repair D] [--hang-rate R] "
	    "[--heartbeat-timeout D]\n"
	    "               [--suspect-grace D] [--policy P] "
	    "[--queue-factor Q|auto]\n"
	    "               [--mu N] [--lambda N] [--generations N] [--dim N] "
	    "[--seed N]\n"
	    "               [--work-ms MS] [--noise SIGMA] "
	    "[--reevaluate-parents] [--batch N]\n"
	    "               [--trace FILE] [--csv FILE] [--gen-csv FILE] "
	    "[--quiet] [--stats]\n"
	    "       r3q-sim --driver bnb --pfsp FILE [--instance N] "
	    "[--lb lb1|lb2]\n"
	    "               [--branching forward|bidir] [--ig N] "
	    "[--split-depth N]\n"
	    "               [--node-budget N] [--multiplicity N[,N...]] "
	    "[--interrupt on|off]\n"
	    "               [--exchange push|none] [--node-us US] "
	    "[--queue-factor Q]\n"
	    "               [--workers N] [--speeds DIST] [--latency DIST] "
	    "[--noise SIGMA]\n"
	    "               [--seed N] [--csv FILE] [--quiet]\n"
	    "       r3q-sim -h | --help | --version\n"
	    "DIST: V, uniform:A:B, lognormal:MEDIAN:SIGMA, table1 (speeds)\n"
	    "D: a duration such as 500ms, 30s, 10m, 1h\n");
	exit(code);
}

/* A number of option opt from lo to hi, or leave. */
static double
parse_num(const char *opt, const char *s, double lo, double hi)
{
	char	*end;
	double	 v;

	errno = 0;
	v = strtod(s, &end);
	if (*s == '\0' || *end != '\0' || errno != 0 || !(v >= lo) ||
	    !(v <= hi))
		die(EX_USAGE, "--%s: '%s' is not a number from %.15g to %.15g",
		    opt, s, lo, hi);
	return (v);
}

/* A duration in seconds: a number and a unit (ms, s, m, h; s alone). */
static double
parse_dur(const char *opt, const char *s)
{
	char	*end;
	double	 v, mul = 1;

	errno = 0;
	v = strtod(s, &end);
	if (end == s || errno != 0 || !(v >= 0))
		goto bad;
	if (strcmp(end, "ms") == 0)
		mul = 1e-3;
	else if (strcmp(end, "s") == 0 || *end == '\0')
		mul = 1;
	else if (strcmp(end, "m") == 0 || strcmp(end, "min") == 0)
		mul = 60;
	else if (strcmp(end, "h") == 0)
		mul = 3600;
	else
		goto bad;
	return (v * mul);
 bad:
	die(EX_USAGE, "--%s: '%s' is not a duration (500ms, 30s, 10m, 1h)",
	    opt, s);
}

/* A distribution of option opt (table1 only for --speeds), or leave. */
static dist
parse_dist(const char *opt, const char *s, bool speeds)
{
	dist	 d;
	double	 a, b;
	char	 tail;

	if (speeds && strcmp(s, "table1") == 0) {
		d.kind = dist::TABLE1;
		return (d);
	}
	if (sscanf(s, "uniform:%lf:%lf%c", &a, &b, &tail) == 2 && a >= 0 &&
	    b >= a) {
		d.kind = dist::UNIFORM;
		d.a = a;
		d.b = b;
		return (d);
	}
	if (sscanf(s, "lognormal:%lf:%lf%c", &a, &b, &tail) == 2 && a > 0 &&
	    b >= 0 && b <= 5) {
		d.kind = dist::LOGNORMAL;
		d.a = a;
		d.b = b;
		return (d);
	}
	if (sscanf(s, "%lf%c", &a, &tail) == 1 && a >= 0) {
		d.kind = dist::CONST;
		d.a = a;
		return (d);
	}
	die(EX_USAGE, "--%s: '%s' is not a distribution (V, uniform:A:B, "
	    "lognormal:MEDIAN:SIGMA%s)", opt, s, speeds ? ", table1" : "");
}

/*
 * --trace FILE: the task times of a real job, replayed: the Chrome
 * trace-event JSON of `r3qctl report --trace`, or a CSV of times in
 * milliseconds (report_times_parse(), which the fuzz target "trace" runs).
 */
static void
trace_load(const std::string &path)
{
	FILE		*f;
	std::string	 buf;
	char		 chunk[65536], err[512];
	double		*ms;
	size_t		 n;

	if ((f = fopen(path.c_str(), "r")) == NULL)
		die(EX_USAGE, "--trace: %s: %s", path.c_str(), strerror(errno));
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
		buf.append(chunk, n);
	if (ferror(f))
		die(EX_FAIL, "--trace: %s: %s", path.c_str(), strerror(errno));
	fclose(f);
	if (report_times_parse(buf.data(), buf.size(), path.c_str(), &ms, &n,
	    err, sizeof(err)) == -1)
		die(EX_DATAERR, "%s", err);
	trace_ms.assign(ms, ms + n);
	free(ms);
}

/* --multiplicity: N or N,N,... (by rank), each from 1 to the core's max. */
static void
parse_mult(const char *arg)
{
	std::vector<uint32_t>	 v;
	const char		*p = arg;
	char			*end;
	unsigned long		 x;

	for (;;) {
		errno = 0;
		x = strtoul(p, &end, 10);
		if (end == p || errno != 0 || x < 1 || x > SCHED_COPIES_MAX ||
		    (*end != ',' && *end != '\0') || v.size() == 64)
			die(EX_USAGE, "--multiplicity: '%s' is not a list of "
			    "at most 64 numbers from 1 to %d", arg,
			    SCHED_COPIES_MAX);
		v.push_back((uint32_t)x);
		if (*end == '\0')
			break;
		p = end + 1;
	}
	O.bnb_mult = v;
	O.bnb_mult_arg = arg;
}

/* One of --driver bnb's options (r3qctl bnb's names and ranges). */
static void
parse_bnb(int ch, const char *name, const char *arg)
{
	switch (ch) {
	case 'f':
		O.bnb_file = arg;
		break;
	case 'i':
		O.bnb_instance = (uint32_t)parse_num(name, arg, 1, UINT32_MAX);
		break;
	case 'L':
		if (strcmp(arg, "lb1") == 0)
			O.bnb_lb = 1;
		else if (strcmp(arg, "lb2") == 0)
			O.bnb_lb = 2;
		else
			die(EX_USAGE, "--lb: '%s' is not lb1 or lb2", arg);
		break;
	case 'j':
		if (strcmp(arg, "forward") == 0)
			O.bnb_branch = 1;
		else if (strcmp(arg, "bidir") == 0)
			O.bnb_branch = 2;
		else
			die(EX_USAGE, "--branching: '%s' is not forward or "
			    "bidir", arg);
		break;
	case 'I':
		O.bnb_ig = (uint32_t)parse_num(name, arg, 0, 10000000);
		break;
	case 'k':
		O.bnb_split = (uint32_t)parse_num(name, arg, 0, 8);
		break;
	case 'u':
		O.bnb_budget = (uint64_t)parse_num(name, arg, 1, 1e15);
		break;
	case 'M':
		parse_mult(arg);
		break;
	case 'x':
		if (strcmp(arg, "on") == 0)
			O.bnb_interrupt = true;
		else if (strcmp(arg, "off") == 0)
			O.bnb_interrupt = false;
		else
			die(EX_USAGE, "--interrupt: '%s' is not on or off",
			    arg);
		break;
	case 'e':
		if (strcmp(arg, "push") == 0)
			O.bnb_exchange = true;
		else if (strcmp(arg, "none") == 0)
			O.bnb_exchange = false;
		else
			die(EX_USAGE, "--exchange: '%s' is not push or none",
			    arg);
		break;
	case 'o':
		O.bnb_node_us = parse_num(name, arg, 1e-3, 1e6);
		break;
	}
}

/* The command line into O; checks what goes together. */
void
parse_opts(int argc, char *argv[])
{
	static const struct option longopts[] = {
		{ "platform",		required_argument, NULL, 'P' },
		{ "delay",		required_argument, NULL, 'y' },
		{ "master-cost",	required_argument, NULL, 'Y' },
		{ "workers",		required_argument, NULL, 'n' },
		{ "cpus",		required_argument, NULL, 'c' },
		{ "speeds",		required_argument, NULL, 'v' },
		{ "latency",		required_argument, NULL, 't' },
		{ "bandwidth",		required_argument, NULL, 'b' },
		{ "network",		required_argument, NULL, 'K' },
		{ "mtbf",		required_argument, NULL, 'F' },
		{ "repair",		required_argument, NULL, 'R' },
		{ "hang-rate",		required_argument, NULL, 'H' },
		{ "heartbeat-timeout",	required_argument, NULL, 'T' },
		{ "suspect-grace",	required_argument, NULL, 'G' },
		{ "policy",		required_argument, NULL, 'p' },
		{ "queue-factor",	required_argument, NULL, 'Q' },
		{ "mu",			required_argument, NULL, 'm' },
		{ "lambda",		required_argument, NULL, 'l' },
		{ "generations",	required_argument, NULL, 'g' },
		{ "dim",		required_argument, NULL, 'd' },
		{ "seed",		required_argument, NULL, 's' },
		{ "work-ms",		required_argument, NULL, 'w' },
		{ "noise",		required_argument, NULL, 'N' },
		{ "reevaluate-parents",	no_argument,	   NULL, 'r' },
		{ "batch",		required_argument, NULL, 'B' },
		{ "trace",		required_argument, NULL, 'X' },
		{ "csv",		required_argument, NULL, 'C' },
		{ "gen-csv",		required_argument, NULL, 'E' },
		{ "quiet",		no_argument,	   NULL, 'q' },
		{ "stats",		no_argument,	   NULL, 'S' },
		{ "driver",		required_argument, NULL, 'D' },
		{ "pfsp",		required_argument, NULL, 'f' },
		{ "instance",		required_argument, NULL, 'i' },
		{ "lb",			required_argument, NULL, 'L' },
		{ "branching",		required_argument, NULL, 'j' },
		{ "ig",			required_argument, NULL, 'I' },
		{ "split-depth",	required_argument, NULL, 'k' },
		{ "node-budget",	required_argument, NULL, 'u' },
		{ "multiplicity",	required_argument, NULL, 'M' },
		{ "interrupt",		required_argument, NULL, 'x' },
		{ "exchange",		required_argument, NULL, 'e' },
		{ "node-us",		required_argument, NULL, 'o' },
		{ "help",		no_argument,	   NULL, 'h' },
		{ "version",		no_argument,	   NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	char	 err[256];
	int	 ch, li;
	bool	 gen = false;
	std::string bnb_opt;	/* one given, for the error */

	memset(&O.ep, 0, sizeof(O.ep));
	O.ep.mu = 30;
	O.ep.lambda = 70;
	O.ep.generations = 100;
	O.ep.dim = 30;
	O.ep.seed = 1;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, ":h", longopts, &li)) != -1) {
		const char *name = ch == '?' || ch == ':' || ch == 'h' ? "" :
		    longopts[li].name;

		switch (ch) {
		case 'h':
			usage(EX_OK);
		case 'V':
			/* The core and the wire sizes of this protocol. */
			printf("r3q-sim %s (R3Q protocol %d)\n",
			    PACKAGE_VERSION, R3Q_PROTOCOL);
			exit(fflush(stdout) == EOF ? 1 : EX_OK);
		case 'P':
			O.platform = optarg;
			break;
		case 'y':
			O.delay_ms = parse_num(name, optarg, 0, 60000);
			break;
		case 'Y':
			O.master_cost = parse_num(name, optarg, 0, 60000) /
			    1000;
			break;
		case 'n':
			O.workers = (uint32_t)parse_num(name, optarg, 1,
			    1000000);
			gen = true;
			break;
		case 'c':
			O.cpus = (uint32_t)parse_num(name, optarg, 1, 1024);
			break;
		case 'v':
			O.speeds = parse_dist(name, optarg, true);
			gen = true;
			break;
		case 't':
			O.latency = parse_dist(name, optarg, false);
			gen = true;
			break;
		case 'b':
			O.bandwidth = parse_num(name, optarg, 1e-3, 1e7) *
			    1e6 / 8;
			break;
		case 'K':
			if (strcmp(optarg, "analytic") == 0)
				fast_net = true;
			else if (strcmp(optarg, "simgrid") == 0)
				fast_net = false;
			else
				die(EX_USAGE, "--network: '%s' is not simgrid "
				    "or analytic", optarg);
			break;
		case 'F':
			O.mtbf = parse_dur(name, optarg);
			break;
		case 'R':
			O.repair = parse_dur(name, optarg);
			break;
		case 'H':
			O.hang_rate = parse_num(name, optarg, 0, 1);
			break;
		case 'T':
			O.hb_timeout = parse_dur(name, optarg);
			if (O.hb_timeout < 0.1)
				die(EX_USAGE, "--heartbeat-timeout: at least "
				    "100ms");
			break;
		case 'G':
			O.grace = parse_dur(name, optarg);
			break;
		case 'p':
			if (sched_policy_parse(optarg, &O.policy) == -1)
				die(EX_USAGE, "--policy: '%s' is not one of "
				    "%s", optarg, sched_policy_list());
			break;
		case 'Q':
			if (strcmp(optarg, "auto") == 0)
				O.qf = SCHED_QF_AUTO;
			else
				O.qf = (uint32_t)parse_num(name, optarg, 1,
				    64);
			break;
		case 'm': case 'l': case 'g': case 'd': {
			uint32_t v = (uint32_t)parse_num(name, optarg, 0,
			    UINT32_MAX);

			if (ch == 'm')
				O.ep.mu = v;
			else if (ch == 'l')
				O.ep.lambda = v;
			else if (ch == 'g')
				O.ep.generations = v;
			else
				O.ep.dim = v;
			break;
		}
		case 's':
			O.ep.seed = strtoull(optarg, NULL, 10);
			parse_num(name, optarg, 0, 1.8446744073709552e19);
			break;
		case 'w':
			O.work_ms = parse_num(name, optarg, 0.001, 3600000);
			break;
		case 'N':
			O.noise = parse_num(name, optarg, 0, 5);
			break;
		case 'r':
			O.ep.reevaluate_parents = 1;
			break;
		case 'B':
			O.batch = (uint32_t)parse_num(name, optarg, 1,
			    100000000);
			break;
		case 'X':
			O.trace = optarg;
			break;
		case 'C':
			O.csv = optarg;
			break;
		case 'E':
			O.gen_csv = optarg;
			break;
		case 'q':
			O.quiet = true;
			break;
		case 'S':
			O.stats = true;
			break;
		case 'D':
			if (strcmp(optarg, "bnb") == 0)
				O.bnb = true;
			else if (strcmp(optarg, "es") == 0)
				O.bnb = false;
			else
				die(EX_USAGE, "--driver: '%s' is not es or bnb",
				    optarg);
			break;
		case 'f': case 'i': case 'L': case 'j': case 'I': case 'k':
		case 'u': case 'M': case 'x': case 'e': case 'o':
			bnb_opt = name;
			parse_bnb(ch, name, optarg);
			break;
		case ':':
			die(EX_USAGE, "option '%s' needs a value",
			    argv[optind - 1]);
		default:
			fprintf(stderr, "r3q-sim: unknown option '%s'\n",
			    argv[optind - 1]);
			usage(EX_USAGE);
		}
	}
	if (optind != argc)
		die(EX_USAGE, "unexpected argument '%s'", argv[optind]);
	if (!O.bnb && !bnb_opt.empty())
		die(EX_USAGE, "--%s is for --driver bnb", bnb_opt.c_str());
	if (O.bnb) {
		if (O.bnb_file.empty())
			die(EX_USAGE, "--driver bnb needs --pfsp FILE (an "
			    "instance in Taillard's format)");
		if (fast_net)
			die(EX_USAGE, "--driver bnb runs on --network simgrid "
			    "only");
		if (O.batch > 0 || !O.trace.empty())
			die(EX_USAGE, "--batch and --trace are for --driver "
			    "es");
		if (O.master_cost > 0)
			die(EX_USAGE, "--master-cost is for --driver es");
	}
	if (!O.bnb && es_params_check(&O.ep, err, sizeof(err)) == -1)
		die(EX_USAGE, "%s", err);
	if (O.platform.empty())
		O.platform = gen ? "" : "lan";
	if (!O.platform.empty() && gen && (O.platform == "lan" ||
	    O.platform == "wan"))
		die(EX_USAGE, "--platform %s has its own hosts: --workers, "
		    "--speeds and --latency are for a generated platform",
		    O.platform.c_str());
	if (O.platform.empty() && O.workers == 0)
		die(EX_USAGE, "a generated platform needs --workers N");
	if (!O.trace.empty())
		trace_load(O.trace);
}

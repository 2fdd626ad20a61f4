/*
 * Makes the seed corpus of the fuzz targets whose inputs are frames
 * (fuzz/corpus/{frame,master-worker,master-client,workerd,lib}) and a
 * journal
 * (fuzz/corpus/journal): every message type of the Envelope, in order and
 * out of it, and the exchanges a real peer has -- the Results of a worker
 * echo the tags that the fake masterd (fuzz/master.c) gives worker "w1".
 * The other targets' seeds are files of the tree, copied by fuzz/run.
 * Usage: mkcorpus DIR (make fuzz-corpus runs it on fuzz/corpus).
 */
#include "config.h"

#include <sys/stat.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include <event2/buffer.h>

#include "log.h"
#include "master.h"
#include "pbgen.h"
#include "util.h"

static const char	*outdir;

/* A growing byte string: one input file. */
struct blob {
	uint8_t	*b;
	size_t	 n;
};

static void
blob_add(struct blob *bl, const void *p, size_t n)
{
	bl->b = realloc(bl->b, bl->n + n + 1);
	if (bl->b == NULL)
		fatal("realloc");
	memcpy(bl->b + bl->n, p, n);
	bl->n += n;
}

/* Append env as a frame. */
static void
blob_env(struct blob *bl, const Envelope *env)
{
	uint8_t	*buf;
	size_t	 len;

	if ((buf = frame_pack(env, &len)) == NULL)
		fatalx("frame_pack");
	blob_add(bl, buf, len);
	free(buf);
}

/* Write the blob as DIR/target/name and empty it. */
static void
blob_put(struct blob *bl, const char *target, const char *name)
{
	char	 path[1024];
	FILE	*f;

	snprintf(path, sizeof(path), "%s/%s", outdir, target);
	if (mkdir(path, 0755) == -1 && errno != EEXIST)
		fatal("mkdir %s", path);
	snprintf(path, sizeof(path), "%s/%s/%s", outdir, target, name);
	if ((f = fopen(path, "wb")) == NULL)
		fatal("%s", path);
	if (bl->n > 0 && fwrite(bl->b, 1, bl->n, f) != bl->n)
		fatal("%s", path);
	if (fclose(f) == EOF)
		fatal("%s", path);
	free(bl->b);
	bl->b = NULL;
	bl->n = 0;
}

/*
 * The Envelope field of each body type, in order; n: how many.  The
 * oneof's members are the fields after id.
 */
static const ProtobufCFieldDescriptor *
body_fields(size_t *n)
{
	const ProtobufCMessageDescriptor *d = &r3q__envelope__descriptor;
	size_t				 i;

	for (i = 0; i < d->n_fields; i++)
		if (d->fields[i].flags & PROTOBUF_C_FIELD_FLAG_ONEOF)
			break;
	*n = d->n_fields - i;
	return (&d->fields[i]);
}

/* An Envelope of body type f, its body at mode m (pbgen_free the body). */
static ProtobufCMessage *
env_make(Envelope *env, const ProtobufCFieldDescriptor *f, enum pbgen_mode m)
{
	ProtobufCMessage	*body;

	r3q__envelope__init(env);
	env->id = 7;
	body = pbgen_new(f->descriptor, m, 16);
	env->body_case = f->id;
	*(ProtobufCMessage **)((uint8_t *)env + f->offset) = body;
	return (body);
}

/* The frame target: one file per type, and all of them in one. */
static void
corpus_frame(void)
{
	const ProtobufCFieldDescriptor	*fs;
	ProtobufCMessage		*body;
	struct blob			 bl = { NULL, 0 }, all = { NULL, 0 };
	Envelope			 env;
	size_t				 i, n;
	char				 name[128];

	fs = body_fields(&n);
	for (i = 0; i < n; i++) {
		body = env_make(&env, &fs[i], PBGEN_TYPICAL);
		blob_env(&bl, &env);
		blob_env(&all, &env);
		snprintf(name, sizeof(name), "%s", fs[i].name);
		blob_put(&bl, "frame", name);
		pbgen_free(body);
	}
	blob_put(&all, "frame", "all-types");
}

/* A Hello from w1, as masterd wants it. */
static void
blob_hello(struct blob *bl)
{
	Envelope	 env = R3Q__ENVELOPE__INIT;
	R3q__Hello	 h = R3Q__HELLO__INIT;
	char		 k0[] = "echo", k1[] = "synth", name[] = "w1";
	char		*kinds[] = { k0, k1 };

	h.protocol = R3Q_PROTOCOL;
	h.name = name;
	h.cpus = 4;
	h.kinds = kinds;
	h.n_kinds = 2;
	h.speed = 1.0;
	env.body_case = R3Q__ENVELOPE__BODY_HELLO;
	env.hello = &h;
	blob_env(bl, &env);
}

/*
 * What w1 says about the tasks of the Assign masterd sent it (from the
 * fake masterd): Progress, then Results with status st, a Heartbeat.
 */
static void
blob_answers(struct blob *bl, const R3q__Assign *a, uint32_t st)
{
	Envelope	 env;
	R3q__Progress	 pr = R3Q__PROGRESS__INIT;
	R3q__Results	 rs = R3Q__RESULTS__INIT;
	R3q__Heartbeat	 hb = R3Q__HEARTBEAT__INIT;
	R3q__Result	*r, **rp;
	uint64_t	*ids;
	size_t		 i;
	char		 err[] = "it failed";

	r = xcalloc(a->n_tasks, sizeof(*r));
	rp = xcalloc(a->n_tasks, sizeof(*rp));
	ids = xcalloc(a->n_tasks, sizeof(*ids));
	for (i = 0; i < a->n_tasks; i++) {
		ids[i] = a->tasks[i]->id;
		r3q__result__init(&r[i]);
		r[i].id = a->tasks[i]->id;
		r[i].epoch = a->epoch;
		r[i].tag = a->tasks[i]->tag;
		r[i].status = st;
		if (st == 0)
			r[i].output = a->tasks[i]->payload;
		else
			r[i].error = err;
		r[i].received_ns = 1000;
		r[i].start_ns = 2000;
		r[i].end_ns = 5000;
		rp[i] = &r[i];
	}
	r3q__envelope__init(&env);
	pr.started = ids;
	pr.n_started = a->n_tasks;
	pr.halfway = ids;
	pr.n_halfway = a->n_tasks;
	env.body_case = R3Q__ENVELOPE__BODY_PROGRESS;
	env.progress = &pr;
	blob_env(bl, &env);
	r3q__envelope__init(&env);
	hb.running = (uint32_t)a->n_tasks;
	hb.first_half = ids;
	hb.n_first_half = a->n_tasks;
	hb.interval_ms = 1000;
	env.body_case = R3Q__ENVELOPE__BODY_HEARTBEAT;
	env.heartbeat = &hb;
	blob_env(bl, &env);
	r3q__envelope__init(&env);
	rs.results = rp;
	rs.n_results = a->n_tasks;
	env.body_case = R3Q__ENVELOPE__BODY_RESULTS;
	env.results = &rs;
	blob_env(bl, &env);
	free(r);
	free(rp);
	free(ids);
}

/* The Assign the fake masterd sends w1 (frame_free it). */
static Envelope *
assign_of_w1(void)
{
	struct fz_peer	 ctl, w;
	Envelope	*in, *a = NULL;

	fz_master_init(NULL);
	fz_peer_new(&ctl, 0, ROLE_CLIENT, NULL);
	fz_job_open(&ctl, FZ_NTASKS);
	fz_peer_new(&w, 1, ROLE_NONE, "w1");
	fz_hello(&w, "w1", 4);
	while (fz_recv(&w, &in) == 1) {
		if (in->body_case == R3Q__ENVELOPE__BODY_ASSIGN && a == NULL)
			a = in;
		else
			frame_free(in);
	}
	fz_peer_free(&w);
	fz_peer_free(&ctl);
	fz_run();
	fz_master_free();
	if (a == NULL)
		fatalx("no Assign for w1");
	return (a);
}

/* The master-worker target: w1's side, from its first byte. */
static void
corpus_master_worker(void)
{
	const ProtobufCFieldDescriptor	*fs;
	ProtobufCMessage		*body;
	struct blob			 bl = { NULL, 0 };
	Envelope			 env, *a;
	R3q__Kinds			 k = R3Q__KINDS__INIT;
	size_t				 i, n;
	char				 name[128], k0[] = "echo";
	char				*kinds[] = { k0 };

	a = assign_of_w1();
	blob_hello(&bl);
	blob_put(&bl, "master-worker", "w1-hello");
	blob_hello(&bl);
	blob_answers(&bl, a->assign, 0);
	blob_put(&bl, "master-worker", "w1-answers");
	blob_hello(&bl);
	blob_answers(&bl, a->assign, 3);	/* TASK_FAILED */
	blob_put(&bl, "master-worker", "w1-failed");
	blob_hello(&bl);
	r3q__envelope__init(&env);
	k.kinds = kinds;
	k.n_kinds = 1;
	env.body_case = R3Q__ENVELOPE__BODY_KINDS;
	env.kinds = &k;
	blob_env(&bl, &env);
	blob_answers(&bl, a->assign, 0);
	blob_put(&bl, "master-worker", "w1-kinds-answers");
	blob_hello(&bl);
	blob_hello(&bl);
	blob_put(&bl, "master-worker", "w1-hello-twice");
	frame_free(a);

	fs = body_fields(&n);
	for (i = 0; i < n; i++) {
		/* before Hello */
		body = env_make(&env, &fs[i], PBGEN_TYPICAL);
		blob_env(&bl, &env);
		snprintf(name, sizeof(name), "%s", fs[i].name);
		blob_put(&bl, "master-worker", name);
		/* after it */
		blob_hello(&bl);
		blob_env(&bl, &env);
		snprintf(name, sizeof(name), "hello-%s", fs[i].name);
		blob_put(&bl, "master-worker", name);
		pbgen_free(body);
	}
}

/* A batch job of two echo tasks, from open to close. */
static void
blob_batch(struct blob *bl, uint64_t job)
{
	Envelope	 env;
	R3q__OpenJob	 oj = R3Q__OPEN_JOB__INIT;
	R3q__SubmitTasks st = R3Q__SUBMIT_TASKS__INIT;
	R3q__TaskSpec	 ts[2], *tsp[2] = { &ts[0], &ts[1] };
	R3q__CloseBatch	 cb = R3Q__CLOSE_BATCH__INIT;
	R3q__AckResults	 ak = R3Q__ACK_RESULTS__INIT;
	R3q__AttachJob	 aj = R3Q__ATTACH_JOB__INIT;
	R3q__CancelTasks ct = R3Q__CANCEL_TASKS__INIT;
	R3q__CloseJob	 cj = R3Q__CLOSE_JOB__INIT;
	uint64_t	 keys[] = { 2 };
	char		 name[] = "seed", kind[] = "echo", p0[] = "a", p1[] = "b";

	r3q__envelope__init(&env);
	env.id = 1;
	oj.name = name;
	env.body_case = R3Q__ENVELOPE__BODY_OPEN_JOB;
	env.open_job = &oj;
	blob_env(bl, &env);
	r3q__task_spec__init(&ts[0]);
	r3q__task_spec__init(&ts[1]);
	ts[0].key = 1;
	ts[0].payload.data = (uint8_t *)p0;
	ts[0].payload.len = 1;
	ts[1].key = 2;
	ts[1].payload.data = (uint8_t *)p1;
	ts[1].payload.len = 1;
	ts[1].copies = 2;
	ts[1].priority = -1;
	st.job = job;
	st.batch = 1;
	st.kind = kind;
	st.tasks = tsp;
	st.n_tasks = 2;
	env.id = 2;
	env.body_case = R3Q__ENVELOPE__BODY_SUBMIT_TASKS;
	env.submit_tasks = &st;
	blob_env(bl, &env);
	ct.job = job;
	ct.keys = keys;
	ct.n_keys = 1;
	env.id = 3;
	env.body_case = R3Q__ENVELOPE__BODY_CANCEL_TASKS;
	env.cancel_tasks = &ct;
	blob_env(bl, &env);
	cb.job = job;
	cb.batch = 1;
	env.id = 4;
	env.body_case = R3Q__ENVELOPE__BODY_CLOSE_BATCH;
	env.close_batch = &cb;
	blob_env(bl, &env);
	ak.job = job;
	ak.seq = 1;
	env.id = 5;
	env.body_case = R3Q__ENVELOPE__BODY_ACK_RESULTS;
	env.ack_results = &ak;
	blob_env(bl, &env);
	aj.job = job;
	env.id = 6;
	env.body_case = R3Q__ENVELOPE__BODY_ATTACH_JOB;
	env.attach_job = &aj;
	blob_env(bl, &env);
	cj.job = job;
	env.id = 7;
	env.body_case = R3Q__ENVELOPE__BODY_CLOSE_JOB;
	env.close_job = &cj;
	blob_env(bl, &env);
}

/* The master-client target: c1's side. */
static void
corpus_master_client(void)
{
	const ProtobufCFieldDescriptor	*fs;
	ProtobufCMessage		*body;
	struct blob			 bl = { NULL, 0 };
	Envelope			 env;
	R3q__SubmitEs			 se = R3Q__SUBMIT_ES__INIT;
	R3q__EsParams			 ep = R3Q__ES_PARAMS__INIT;
	R3q__SubmitBnb			 sb = R3Q__SUBMIT_BNB__INIT;
	R3q__BnbParams			 bp = R3Q__BNB_PARAMS__INIT;
	R3q__JobQuery			 jq = R3Q__JOB_QUERY__INIT;
	R3q__ListJobs			 lj = R3Q__LIST_JOBS__INIT;
	R3q__ListWorkers		 lw = R3Q__LIST_WORKERS__INIT;
	R3q__CancelJob			 cj = R3Q__CANCEL_JOB__INIT;
	R3q__JobTraceRequest		 tr = R3Q__JOB_TRACE_REQUEST__INIT;
	uint32_t			 times[] = { 3, 2, 4, 1, 5, 2 };
	size_t				 i, n;
	char				 name[128], pfsp[] = "pfsp";

	blob_batch(&bl, 2);		/* the control socket's job is 1 */
	blob_put(&bl, "master-client", "c1-batch");

	r3q__envelope__init(&env);
	ep.mu = 2;
	ep.lambda = 4;
	ep.generations = 2;
	ep.dim = 2;
	ep.seed = 1;
	ep.work_ms = 1;
	se.params = &ep;
	env.id = 1;
	env.body_case = R3Q__ENVELOPE__BODY_SUBMIT_ES;
	env.submit_es = &se;
	blob_env(&bl, &env);
	jq.job = 2;
	jq.watch = 1;
	env.id = 2;
	env.body_case = R3Q__ENVELOPE__BODY_JOB_QUERY;
	env.job_query = &jq;
	blob_env(&bl, &env);
	blob_put(&bl, "master-client", "c1-es-watch");

	bp.problem = pfsp;
	bp.jobs = 3;
	bp.machines = 2;
	bp.times = times;
	bp.n_times = 6;
	bp.lb = 1;
	bp.branching = 1;
	sb.params = &bp;
	env.id = 1;
	env.body_case = R3Q__ENVELOPE__BODY_SUBMIT_BNB;
	env.submit_bnb = &sb;
	blob_env(&bl, &env);
	blob_put(&bl, "master-client", "c1-bnb");

	env.id = 1;
	env.body_case = R3Q__ENVELOPE__BODY_LIST_JOBS;
	env.list_jobs = &lj;
	blob_env(&bl, &env);
	env.id = 2;
	env.body_case = R3Q__ENVELOPE__BODY_LIST_WORKERS;
	env.list_workers = &lw;
	blob_env(&bl, &env);
	jq.job = 1;
	jq.watch = 0;
	env.id = 3;
	env.body_case = R3Q__ENVELOPE__BODY_JOB_QUERY;
	env.job_query = &jq;
	blob_env(&bl, &env);
	tr.job = 1;
	env.id = 4;
	env.body_case = R3Q__ENVELOPE__BODY_JOB_TRACE_REQUEST;
	env.job_trace_request = &tr;
	blob_env(&bl, &env);
	cj.job = 1;
	env.id = 5;
	env.body_case = R3Q__ENVELOPE__BODY_CANCEL_JOB;
	env.cancel_job = &cj;
	blob_env(&bl, &env);
	blob_put(&bl, "master-client", "c1-queries");

	fs = body_fields(&n);
	for (i = 0; i < n; i++) {
		body = env_make(&env, &fs[i], PBGEN_TYPICAL);
		blob_env(&bl, &env);
		snprintf(name, sizeof(name), "%s", fs[i].name);
		blob_put(&bl, "master-client", name);
		pbgen_free(body);
	}
}

/* The workerd target: the master's side, after w1's Hello. */
static void
corpus_workerd(void)
{
	const ProtobufCFieldDescriptor	*fs;
	ProtobufCMessage		*body;
	struct blob			 bl = { NULL, 0 }, wel = { NULL, 0 };
	Envelope			 env;
	R3q__Welcome			 w = R3Q__WELCOME__INIT;
	R3q__Assign			 a = R3Q__ASSIGN__INIT;
	R3q__Task			 t[3], *tp[3] = { &t[0], &t[1], &t[2] };
	R3q__Cancel			 c = R3Q__CANCEL__INIT;
	R3q__Error			 e = R3Q__ERROR__INIT;
	uint64_t			 repl[] = { 2 }, ids[] = { 3, 9 };
	size_t				 i, n;
	char				 name[128], echo[] = "echo",
					 synth[] = "synth", nokind[] = "nokind",
					 msg[] = "hello from the master";

	r3q__envelope__init(&env);
	w.protocol = R3Q_PROTOCOL;
	w.worker_id = 1;
	w.epoch = FZ_EPOCH;
	w.queue_len = 8;
	w.boot = 2;
	env.body_case = R3Q__ENVELOPE__BODY_WELCOME;
	env.welcome = &w;
	blob_env(&wel, &env);

	blob_add(&bl, wel.b, wel.n);
	for (i = 0; i < 3; i++) {
		r3q__task__init(&t[i]);
		t[i].id = i + 1;
		t[i].tag = 0x1234 + i;
		t[i].payload.data = (uint8_t *)msg;
		t[i].payload.len = i * 5;
	}
	t[0].kind = echo;
	t[1].kind = synth;
	t[2].kind = nokind;
	a.epoch = FZ_EPOCH;
	a.tasks = tp;
	a.n_tasks = 3;
	a.replicas = repl;
	a.n_replicas = 1;
	env.body_case = R3Q__ENVELOPE__BODY_ASSIGN;
	env.assign = &a;
	blob_env(&bl, &env);
	c.ids = ids;
	c.n_ids = 2;
	env.body_case = R3Q__ENVELOPE__BODY_CANCEL;
	env.cancel = &c;
	blob_env(&bl, &env);
	e.message = msg;
	env.body_case = R3Q__ENVELOPE__BODY_ERROR;
	env.error = &e;
	blob_env(&bl, &env);
	blob_put(&bl, "workerd", "m-welcome-assign-cancel-error");
	blob_env(&bl, &env);
	blob_put(&bl, "workerd", "m-refused");

	fs = body_fields(&n);
	for (i = 0; i < n; i++) {
		body = env_make(&env, &fs[i], PBGEN_TYPICAL);
		blob_env(&bl, &env);
		snprintf(name, sizeof(name), "%s", fs[i].name);
		blob_put(&bl, "workerd", name);
		blob_add(&bl, wel.b, wel.n);
		blob_env(&bl, &env);
		snprintf(name, sizeof(name), "welcome-%s", fs[i].name);
		blob_put(&bl, "workerd", name);
		pbgen_free(body);
	}
	free(wel.b);
}

/* The lib target: the master's side after JobOpened (job 7). */
static void
corpus_lib(void)
{
	const ProtobufCFieldDescriptor	*fs;
	ProtobufCMessage		*body;
	struct blob			 bl = { NULL, 0 };
	Envelope			 env;
	R3q__TaskResults		 tr = R3Q__TASK_RESULTS__INIT;
	R3q__TaskOutcome		 o[4], *op[4] = { &o[0], &o[1], &o[2],
					     &o[3] };
	R3q__BatchDone			 bd = R3Q__BATCH_DONE__INIT;
	R3q__Error			 e = R3Q__ERROR__INIT;
	size_t				 i, n;
	char				 name[128], out[] = "task 1",
					 why[] = "it failed", msg[] = "no";

	for (i = 0; i < 4; i++) {
		r3q__task_outcome__init(&o[i]);
		o[i].key = i + 1;
		o[i].seq = i + 1;
		o[i].batch = 1;
		o[i].status = (uint32_t)i;
		if (i == 0) {
			o[i].output.data = (uint8_t *)out;
			o[i].output.len = strlen(out);
		} else
			o[i].error = why;
	}
	r3q__envelope__init(&env);
	tr.job = 7;
	tr.results = op;
	tr.n_results = 4;
	env.body_case = R3Q__ENVELOPE__BODY_TASK_RESULTS;
	env.task_results = &tr;
	blob_env(&bl, &env);
	bd.job = 7;
	bd.batch = 1;
	env.body_case = R3Q__ENVELOPE__BODY_BATCH_DONE;
	env.batch_done = &bd;
	blob_env(&bl, &env);
	blob_put(&bl, "lib", "m-results-batchdone");
	e.message = msg;
	env.id = 2;
	env.body_case = R3Q__ENVELOPE__BODY_ERROR;
	env.error = &e;
	blob_env(&bl, &env);
	blob_put(&bl, "lib", "m-error");

	fs = body_fields(&n);
	for (i = 0; i < n; i++) {
		body = env_make(&env, &fs[i], PBGEN_TYPICAL);
		blob_env(&bl, &env);
		snprintf(name, sizeof(name), "%s", fs[i].name);
		blob_put(&bl, "lib", name);
		pbgen_free(body);
	}
}

/* The journal target: the journal of a masterd that ran a batch job. */
static void
corpus_journal(void)
{
	struct fz_peer	 ctl, w;
	struct blob	 bl = { NULL, 0 };
	char		 path[1024], buf[65536];
	FILE		*f;
	size_t		 n;
	int		 i;

	snprintf(path, sizeof(path), "%s/journal.tmp", outdir);
	unlink(path);
	fz_master_init(path);
	fz_peer_new(&ctl, 0, ROLE_CLIENT, NULL);
	fz_job_open(&ctl, FZ_NTASKS);	/* done by the worker */
	fz_job_open(&ctl, 4);		/* still running */
	fz_peer_new(&w, 1, ROLE_NONE, "w1");
	fz_hello(&w, "w1", 4);
	for (i = 0; i < 4 && fz_work(&w) > 0; i++)
		;
	fz_peer_free(&w);
	fz_peer_free(&ctl);
	fz_run();
	fz_master_free();
	if ((f = fopen(path, "rb")) == NULL)
		fatal("%s", path);
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		blob_add(&bl, buf, n);
	fclose(f);
	unlink(path);
	blob_put(&bl, "journal", "batch-jobs.db");
}

int
main(int argc, char *argv[])
{
	if (argc != 2) {
		fprintf(stderr, "usage: mkcorpus DIR\n");
		return (64);
	}
	outdir = argv[1];
	log_init("mkcorpus", 1, LOG_DAEMON);
	if (mkdir(outdir, 0755) == -1 && errno != EEXIST)
		fatal("mkdir %s", outdir);
	corpus_frame();
	corpus_master_worker();
	corpus_master_client();
	corpus_workerd();
	corpus_lib();
	corpus_journal();
	return (0);
}

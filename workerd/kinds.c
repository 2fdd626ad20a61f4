/*
 * The task kinds this worker offers: the built-in ones, and those the
 * administrator installs in workerd.conf (exec, persistent exec, plugin;
 * workerd.conf(5), "TASK KINDS").  This file reads their lines, checks
 * them, prints them for -n, finds the slot users their processes run as
 * (workerd.conf(5), "Slot users"), and keeps the table of configured
 * kinds that Assign looks names up in.
 *
 * A client names a kind and nothing else: the programs, arguments and
 * environment come from this file only, and a payload is data a program
 * reads on its standard input, never part of a command line.
 *
 * The table is the loop thread's.  Each configured kind (struct ext_kind)
 * has one reference from the table and one per task received under it;
 * an execution thread may drop the last one (ext_close then runs there).
 * A reload builds a new table, reusing every kind whose definition did
 * not change (its persistent processes and its loaded plugin stay), and
 * drops the old table's references: a task of a changed or removed kind
 * finishes under the definition it was received with.
 */
#include "config.h"

#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <linux/capability.h>

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cpus.h"
#include "log.h"
#include "util.h"
#include "workerd.h"

#define KINDS_MAX	128		/* configured kinds */
#define KIND_ARGS_MAX	256		/* words of a command */
#define KIND_ENV_MAX	256		/* env entries of a kind */
#define DEFAULT_PATH	"PATH=/usr/local/bin:/usr/bin:/bin"

/* What workerd.conf says about one kind. */
struct kind_conf {
	char		 kc_name[EXT_NAME_MAX + 1];
	int		 kc_type;	/* enum ext_type, or -1: options only */
	int		 kc_line;	/* its exec or plugin line */
	int		 kc_optline;	/* its first option's line */
	char		**kc_argv;
	char		**kc_env;
	size_t		 kc_nenv;
	uint64_t	 kc_timeout;	/* ms; 0 none */
	int		 kc_has_grace;
	uint64_t	 kc_grace;
};

/* Every kind line of a file, and the env lines for all kinds. */
struct kinds_conf {
	struct kind_conf *ks_v;
	size_t		  ks_n;
	char		**ks_env;
	size_t		  ks_nenv;
};

static struct ext_kind	**kt_v;		/* the table: loop thread only */
static size_t		  kt_n;

/* Free a NULL-terminated vector of strings. */
static void
strv_free(char **v)
{
	size_t	 i;

	if (v == NULL)
		return;
	for (i = 0; v[i] != NULL; i++)
		free(v[i]);
	free(v);
}

/* Append a copy of s to the NULL-terminated *v of *n entries. */
static void
strv_add(char ***v, size_t *n, const char *s)
{
	*v = xreallocarray(*v, *n + 2, sizeof(**v));
	(*v)[(*n)++] = xstrdup(s);
	(*v)[*n] = NULL;
}

/* A NULL-terminated copy of v. */
static char **
strv_dup(char *const *v)
{
	char	**c = NULL;
	size_t	  n = 0;

	for (; v != NULL && *v != NULL; v++)
		strv_add(&c, &n, *v);
	if (c == NULL)
		c = xcalloc(1, sizeof(*c));
	return (c);
}

/* Are two NULL-terminated vectors equal? */
static int
strv_eq(char *const *a, char *const *b)
{
	for (; *a != NULL && *b != NULL; a++, b++)
		if (strcmp(*a, *b) != 0)
			return (0);
	return (*a == NULL && *b == NULL);
}

/* A new, empty set of kind lines. */
struct kinds_conf *
kinds_conf_new(void)
{
	return (xcalloc(1, sizeof(struct kinds_conf)));
}

/* Free what kinds_conf_new and kinds_conf_line made. */
void
kinds_conf_free(struct kinds_conf *ks)
{
	size_t	 i;

	if (ks == NULL)
		return;
	for (i = 0; i < ks->ks_n; i++) {
		strv_free(ks->ks_v[i].kc_argv);
		strv_free(ks->ks_v[i].kc_env);
	}
	free(ks->ks_v);
	strv_free(ks->ks_env);
	free(ks);
}

/* Is name a kind's name: 1 to EXT_NAME_MAX printable, no blanks? */
static int
kind_name_ok(const char *name)
{
	size_t	 i, n = strlen(name);

	if (n == 0 || n > EXT_NAME_MAX)
		return (0);
	for (i = 0; i < n; i++)
		if (!isgraph((unsigned char)name[i]))
			return (0);
	return (1);
}

/* The kind called name, made if need be (options may come first). */
static struct kind_conf *
kinds_conf_get(struct kinds_conf *ks, const char *name, int line,
    char *err, size_t errlen)
{
	struct kind_conf	*kc;
	size_t			 i;

	for (i = 0; i < ks->ks_n; i++)
		if (strcmp(ks->ks_v[i].kc_name, name) == 0)
			return (&ks->ks_v[i]);
	if (ks->ks_n == KINDS_MAX) {
		snprintf(err, errlen, "more than %d kinds", KINDS_MAX);
		return (NULL);
	}
	ks->ks_v = xreallocarray(ks->ks_v, ks->ks_n + 1, sizeof(*ks->ks_v));
	kc = &ks->ks_v[ks->ks_n++];
	memset(kc, 0, sizeof(*kc));
	snprintf(kc->kc_name, sizeof(kc->kc_name), "%s", name);
	kc->kc_type = -1;
	kc->kc_optline = line;
	return (kc);
}

/*
 * Split a command into words at blanks; double quotes group a word with
 * blanks in it, and a backslash inside them escapes the next character.
 */
static int
kind_split(const char *s, char ***argv, char *err, size_t errlen)
{
	char	 word[CONF_STRMAX], **v = NULL;
	size_t	 n = 0, w;
	int	 quoted;

	for (;;) {
		while (*s == ' ' || *s == '\t')
			s++;
		if (*s == '\0')
			break;
		w = 0;
		quoted = 0;
		while (*s != '\0' && (quoted || (*s != ' ' && *s != '\t'))) {
			if (*s == '"') {
				quoted = !quoted;
				s++;
				continue;
			}
			if (quoted && *s == '\\' && s[1] != '\0')
				s++;
			if (w + 1 < sizeof(word))
				word[w++] = *s;
			s++;
		}
		if (quoted) {
			snprintf(err, errlen, "unterminated quote");
			strv_free(v);
			return (-1);
		}
		word[w] = '\0';
		if (n == KIND_ARGS_MAX) {
			snprintf(err, errlen, "more than %d words",
			    KIND_ARGS_MAX);
			strv_free(v);
			return (-1);
		}
		strv_add(&v, &n, word);
	}
	if (n == 0) {
		snprintf(err, errlen, "no program given");
		return (-1);
	}
	*argv = v;
	return (0);
}

/* Is s "VAR=value" with VAR a shell variable's name? */
static int
kind_env_ok(const char *s)
{
	const char	*p = s;

	if (!isalpha((unsigned char)*p) && *p != '_')
		return (0);
	while (isalnum((unsigned char)*p) || *p == '_')
		p++;
	return (*p == '=');
}

/*
 * conf_load_ext's hook for workerd.conf: the kind lines "exec NAME",
 * "plugin NAME", "timeout NAME", "kill_grace NAME", "env NAME" and "env".
 * Returns 0, -1 with a message, or 1 for a key that is none of these.
 */
int
kinds_conf_line(void *arg, const char *key, const char *value, int line,
    char *err, size_t errlen)
{
	struct kinds_conf	*ks = arg;
	struct kind_conf	*kc;
	char			 word[32], name[CONF_STRMAX], msg[256];
	char			**argv;
	const char		*sp, *v = value;
	uint64_t		 ms;
	int			 type;

	if (strcmp(key, "env") == 0) {
		if (!kind_env_ok(value)) {
			snprintf(err, errlen, "env: '%.200s' is not "
			    "VARIABLE=value", value);
			return (-1);
		}
		if (ks->ks_nenv == KIND_ENV_MAX) {
			snprintf(err, errlen, "env: more than %d entries",
			    KIND_ENV_MAX);
			return (-1);
		}
		strv_add(&ks->ks_env, &ks->ks_nenv, value);
		return (0);
	}
	if ((sp = strpbrk(key, " \t")) == NULL ||
	    (size_t)(sp - key) >= sizeof(word))
		return (1);
	memcpy(word, key, sp - key);
	word[sp - key] = '\0';
	if (strcmp(word, "exec") != 0 && strcmp(word, "plugin") != 0 &&
	    strcmp(word, "timeout") != 0 && strcmp(word, "kill_grace") != 0 &&
	    strcmp(word, "env") != 0)
		return (1);
	while (*sp == ' ' || *sp == '\t')
		sp++;
	snprintf(name, sizeof(name), "%s", sp);
	if (!kind_name_ok(name)) {
		snprintf(err, errlen, "%s: '%.100s' is not a kind's name (1 to "
		    "%d printable characters, no blanks)", word, name,
		    EXT_NAME_MAX);
		return (-1);
	}
	if (task_kind_lookup(name) != NULL) {
		snprintf(err, errlen, "%s %s: '%s' is a built-in kind", word,
		    name, name);
		return (-1);
	}
	if ((kc = kinds_conf_get(ks, name, line, err, errlen)) == NULL)
		return (-1);

	if (strcmp(word, "exec") == 0 || strcmp(word, "plugin") == 0) {
		if (kc->kc_type != -1) {
			snprintf(err, errlen, "%s %s: kind '%s' is already "
			    "defined at line %d", word, name, name,
			    kc->kc_line);
			return (-1);
		}
		type = word[0] == 'p' ? EXT_PLUGIN : EXT_EXEC;
		if (type == EXT_EXEC && strncmp(v, "persistent", 10) == 0 &&
		    (v[10] == ' ' || v[10] == '\t')) {
			type = EXT_PERSISTENT;
			v += 10;
		}
		if (kind_split(v, &argv, msg, sizeof(msg)) == -1) {
			snprintf(err, errlen, "%s %s: %s", word, name, msg);
			return (-1);
		}
		if (argv[0][0] != '/') {
			snprintf(err, errlen, "%s %s: '%.200s' is not an "
			    "absolute path", word, name, argv[0]);
			strv_free(argv);
			return (-1);
		}
		if (type == EXT_PLUGIN && argv[1] != NULL) {
			snprintf(err, errlen, "plugin %s: a plugin takes a "
			    "path and no arguments", name);
			strv_free(argv);
			return (-1);
		}
		kc->kc_type = type;
		kc->kc_argv = argv;
		kc->kc_line = line;
		return (0);
	}
	if (strcmp(word, "env") == 0) {
		if (!kind_env_ok(value)) {
			snprintf(err, errlen, "env %s: '%.200s' is not "
			    "VARIABLE=value", name, value);
			return (-1);
		}
		if (kc->kc_nenv == KIND_ENV_MAX) {
			snprintf(err, errlen, "env %s: more than %d entries",
			    name, KIND_ENV_MAX);
			return (-1);
		}
		strv_add(&kc->kc_env, &kc->kc_nenv, value);
		return (0);
	}
	if (conf_parse_duration(value, &ms) == -1 ||
	    (word[0] == 't' && (ms == 0 || ms > 30ULL * 86400000)) ||
	    (word[0] == 'k' && ms > 600000)) {
		snprintf(err, errlen, "%s %s: '%.100s' is not a duration "
		    "%s (e.g. 500ms, 30s, 2m)", word, name, value,
		    word[0] == 't' ? "from 1ms to 30d" : "up to 10m");
		return (-1);
	}
	if (word[0] == 't')
		kc->kc_timeout = ms;
	else {
		kc->kc_has_grace = 1;
		kc->kc_grace = ms;
	}
	return (0);
}

/*
 * After the whole file: every kind named by an option is defined, and
 * every program is there and executable (every plugin readable) by this
 * process.  -1 with "file:line: message".
 */
int
kinds_conf_check(const struct kinds_conf *ks, const char *file, char *err,
    size_t errlen)
{
	const struct kind_conf	*kc;
	size_t			 i;

	for (i = 0; i < ks->ks_n; i++) {
		kc = &ks->ks_v[i];
		if (kc->kc_type == -1) {
			snprintf(err, errlen, "%s:%d: no 'exec %s' or 'plugin "
			    "%s' line defines kind '%s'", file, kc->kc_optline,
			    kc->kc_name, kc->kc_name, kc->kc_name);
			return (-1);
		}
		if (access(kc->kc_argv[0], kc->kc_type == EXT_PLUGIN ? R_OK :
		    X_OK) == -1) {
			snprintf(err, errlen, "%s:%d: %s %s: %s: %s", file,
			    kc->kc_line, kc->kc_type == EXT_PLUGIN ? "plugin" :
			    "exec", kc->kc_name, kc->kc_argv[0],
			    strerror(errno));
			return (-1);
		}
	}
	return (0);
}

/*
 * workerd -n: every plugin loads, has its symbols and speaks this ABI.
 * Its init is not called (that happens when workerd starts).
 */
int
kinds_conf_check_plugins(const struct kinds_conf *ks, const char *file,
    char *err, size_t errlen)
{
	const struct kind_conf	*kc;
	char			 msg[512];
	size_t			 i;

	for (i = 0; i < ks->ks_n; i++) {
		kc = &ks->ks_v[i];
		if (kc->kc_type != EXT_PLUGIN)
			continue;
		if (ext_plugin_check(kc->kc_argv[0], msg, sizeof(msg)) == -1) {
			snprintf(err, errlen, "%s:%d: plugin %s: %s", file,
			    kc->kc_line, kc->kc_name, msg);
			return (-1);
		}
	}
	return (0);
}

/* The environment of kind kc: its own env lines over the file's, PATH. */
static char **
kinds_env(const struct kinds_conf *ks, const struct kind_conf *kc)
{
	char	**v = NULL;
	size_t	  n = 0, i, k, len;
	int	  path = 0, shadowed;

	for (i = 0; i < ks->ks_nenv; i++) {
		len = strcspn(ks->ks_env[i], "=") + 1;
		shadowed = 0;
		for (k = 0; k < kc->kc_nenv; k++)
			if (strncmp(kc->kc_env[k], ks->ks_env[i], len) == 0)
				shadowed = 1;
		/* a later env line for all kinds wins too */
		for (k = i + 1; k < ks->ks_nenv; k++)
			if (strncmp(ks->ks_env[k], ks->ks_env[i], len) == 0)
				shadowed = 1;
		if (!shadowed)
			strv_add(&v, &n, ks->ks_env[i]);
	}
	for (i = 0; i < kc->kc_nenv; i++) {
		len = strcspn(kc->kc_env[i], "=") + 1;
		shadowed = 0;
		for (k = i + 1; k < kc->kc_nenv; k++)
			if (strncmp(kc->kc_env[k], kc->kc_env[i], len) == 0)
				shadowed = 1;
		if (!shadowed)
			strv_add(&v, &n, kc->kc_env[i]);
	}
	for (i = 0; i < n; i++)
		if (strncmp(v[i], "PATH=", 5) == 0)
			path = 1;
	if (!path)
		strv_add(&v, &n, DEFAULT_PATH);
	return (v);
}

/* Print a word so that kind_split reads it back. */
static void
kinds_print_word(FILE *out, const char *w)
{
	if (*w != '\0' && strpbrk(w, " \t\"\\#") == NULL) {
		fputs(w, out);
		return;
	}
	fputc('"', out);
	for (; *w != '\0'; w++) {
		if (*w == '"' || *w == '\\')
			fputc('\\', out);
		fputc(*w, out);
	}
	fputc('"', out);
}

/* Print a duration as conf_print does. */
static void
kinds_print_ms(FILE *out, uint64_t ms)
{
	char	 buf[32];

	conf_format_duration(buf, sizeof(buf), ms);
	fputs(buf, out);
}

/*
 * Print the kind lines in the file's syntax (workerd -nv): what is
 * printed reads back to the same kinds.
 */
void
kinds_conf_print(FILE *out, const struct kinds_conf *ks)
{
	const struct kind_conf	*kc;
	size_t			 i, k;

	for (i = 0; i < ks->ks_nenv; i++)
		fprintf(out, "env = \"%s\"\n", ks->ks_env[i]);
	for (i = 0; i < ks->ks_n; i++) {
		kc = &ks->ks_v[i];
		fprintf(out, "%s %s = %s", kc->kc_type == EXT_PLUGIN ?
		    "plugin" : "exec", kc->kc_name, kc->kc_type ==
		    EXT_PERSISTENT ? "persistent " : "");
		for (k = 0; kc->kc_argv[k] != NULL; k++) {
			if (k > 0)
				fputc(' ', out);
			kinds_print_word(out, kc->kc_argv[k]);
		}
		fputc('\n', out);
		if (kc->kc_timeout > 0) {
			fprintf(out, "timeout %s = ", kc->kc_name);
			kinds_print_ms(out, kc->kc_timeout);
			fputc('\n', out);
		}
		if (kc->kc_has_grace) {
			fprintf(out, "kill_grace %s = ", kc->kc_name);
			kinds_print_ms(out, kc->kc_grace);
			fputc('\n', out);
		}
		for (k = 0; k < kc->kc_nenv; k++)
			fprintf(out, "env %s = \"%s\"\n", kc->kc_name,
			    kc->kc_env[k]);
	}
}

/*
 * Say every kind with what it runs (workerd -n): the built-in ones, then
 * each configured kind's type, command, timeout and environment.
 */
void
kinds_conf_list(FILE *out, const struct kinds_conf *ks,
    const struct workerd_config *c)
{
	const struct task_kind	*bk;
	const struct kind_conf	*kc;
	char			**env;
	size_t			 i, k, n;

	bk = task_kind_list(&n);
	for (i = 0; i < n; i++)
		fprintf(out, "kind %s: built in\n", bk[i].name);
	for (i = 0; i < ks->ks_n; i++) {
		kc = &ks->ks_v[i];
		fprintf(out, "kind %s: %s", kc->kc_name, kc->kc_type ==
		    EXT_PLUGIN ? "plugin" : kc->kc_type == EXT_PERSISTENT ?
		    "persistent exec" : "exec");
		for (k = 0; kc->kc_argv[k] != NULL; k++) {
			fputc(' ', out);
			kinds_print_word(out, kc->kc_argv[k]);
		}
		fprintf(out, "; timeout ");
		if (kc->kc_timeout > 0)
			kinds_print_ms(out, kc->kc_timeout);
		else
			fprintf(out, "none");
		if (kc->kc_type != EXT_PLUGIN) {
			fprintf(out, ", kill_grace ");
			kinds_print_ms(out, kc->kc_has_grace ? kc->kc_grace :
			    c->kill_grace);
			fprintf(out, ", env");
			env = kinds_env(ks, kc);
			for (k = 0; env[k] != NULL; k++)
				fprintf(out, " %s", env[k]);
			strv_free(env);
		}
		fputc('\n', out);
	}
}

/*
 * Warn (workerd -n, and at start) about files a user other than root
 * could change: whoever can write workerd.conf, a program or a plugin
 * can run code as the worker's user on every task; about process kinds
 * run as workerd's own user (slot_users = none), as root above all; and
 * about plugins, which run inside workerd, as its user.
 */
int
kinds_conf_audit(const struct kinds_conf *ks, const char *slot_users,
    const char *file, void (*warn)(const char *, ...))
{
	struct stat	 st, null;
	const char	*path;
	size_t		 i;
	int		 n = 0, plugins = 0;

	for (i = 0; i < ks->ks_n; i++)
		if (ks->ks_v[i].kc_type == EXT_PLUGIN)
			plugins = 1;
	if (kinds_have_process(ks) && strcmp(slot_users, "none") == 0) {
		if (geteuid() == 0)
			warn("the configured kinds would run as root "
			    "(slot_users = none): every client's task may do "
			    "anything root can here");
		else
			warn("slot_users = none: every task runs as workerd's "
			    "own user (uid %u), and may read its key and the "
			    "payloads of the tasks beside it",
			    (unsigned)geteuid());
		n++;
	}
	if (plugins && geteuid() == 0) {
		warn("the configured plugin kinds would run as root, inside "
		    "workerd: run workerd as an unprivileged user "
		    "(workerd.service runs it as r3q)");
		n++;
	}
	for (i = 0; i <= ks->ks_n; i++) {
		path = i == 0 ? file : ks->ks_v[i - 1].kc_argv[0];
		if (i > 0 && ks->ks_v[i - 1].kc_type == -1)
			continue;
		if (stat(path, &st) == -1)
			continue;
		/* -f /dev/null: no file, nothing anyone could change. */
		if (i == 0 && S_ISCHR(st.st_mode) && stat("/dev/null",
		    &null) == 0 && st.st_rdev == null.st_rdev)
			continue;
		if (st.st_uid != 0) {
			warn("%s is owned by uid %u, not root: that user can "
			    "make workerd run anything", path,
			    (unsigned)st.st_uid);
			n++;
		} else if (st.st_mode & (S_IWGRP | S_IWOTH)) {
			warn("%s is writable by %s: they can make workerd run "
			    "anything", path, st.st_mode & S_IWOTH ?
			    "everyone" : "its group");
			n++;
		}
	}
	return (n);
}

/* Whether ks has a kind that runs processes (exec, persistent). */
int
kinds_have_process(const struct kinds_conf *ks)
{
	size_t	 i;

	for (i = 0; ks != NULL && i < ks->ks_n; i++)
		if (ks->ks_v[i].kc_type == EXT_EXEC ||
		    ks->ks_v[i].kc_type == EXT_PERSISTENT)
			return (1);
	return (0);
}

/*
 * The capabilities of the four that slot users need and workerd lacks,
 * named in buf ("" when it has them all, as root does).
 */
static void
kinds_caps_missing(char *buf, size_t len)
{
	static const struct {
		int		 cap;
		const char	*name;
	} need[] = {
		{ CAP_SETUID, "CAP_SETUID" },
		{ CAP_SETGID, "CAP_SETGID" },
		{ CAP_CHOWN, "CAP_CHOWN" },
		{ CAP_KILL, "CAP_KILL" },
	};
	struct __user_cap_header_struct	 hdr;
	struct __user_cap_data_struct	 data[2];
	size_t				 i;

	buf[0] = '\0';
	memset(&hdr, 0, sizeof(hdr));
	memset(data, 0, sizeof(data));
	hdr.version = _LINUX_CAPABILITY_VERSION_3;
	if (syscall(SYS_capget, &hdr, data) == -1) {
		snprintf(buf, len, "capget: %s", strerror(errno));
		return;
	}
	for (i = 0; i < sizeof(need) / sizeof(need[0]); i++)
		if ((data[need[i].cap / 32].effective &
		    (1U << (need[i].cap % 32))) == 0)
			snprintf(buf + strlen(buf), len - strlen(buf), "%s%s",
			    buf[0] != '\0' ? ", " : "", need[i].name);
}

/*
 * Check as the slot user cr (user) that each process kind's program may
 * be run, and that workdir may be passed through: a program the slot
 * users cannot reach (a script under /root), or a workdir of mode 0700,
 * would fail every task.  Nothing is checked where workerd cannot become the
 * user (workerd -n without the capabilities).
 */
static int
kinds_slot_access(const struct kinds_conf *ks, const char *workdir,
    const struct ext_cred *cr, const char *user, char *err, size_t errlen)
{
	const struct kind_conf	*kc;
	int			 fd[2], r[2] = { -1, 0 }, status;
	ssize_t			 n;
	size_t			 i;
	pid_t			 pid;

	if (pipe2(fd, O_CLOEXEC) == -1)
		return (0);
	if ((pid = fork()) == -1) {
		close(fd[0]);
		close(fd[1]);
		return (0);
	}
	if (pid == 0) {
		close(fd[0]);
		if (ext_setcred(cr) == -1)
			_exit(2);
		for (i = 0; i < ks->ks_n; i++) {
			kc = &ks->ks_v[i];
			if ((kc->kc_type != EXT_EXEC &&
			    kc->kc_type != EXT_PERSISTENT) ||
			    access(kc->kc_argv[0], X_OK) == 0)
				continue;
			r[0] = (int)i;
			r[1] = errno;
			if (write(fd[1], r, sizeof(r)) == -1)
				_exit(3);
			_exit(1);
		}
		if (access(workdir, X_OK) == -1) {
			r[0] = -2;
			r[1] = errno;
			if (write(fd[1], r, sizeof(r)) == -1)
				_exit(3);
			_exit(1);
		}
		_exit(0);
	}
	close(fd[1]);
	while ((n = read(fd[0], r, sizeof(r))) == -1 && errno == EINTR)
		;
	close(fd[0]);
	while (waitpid(pid, &status, 0) == -1 && errno == EINTR)
		;
	if (n == (ssize_t)sizeof(r) && r[0] == -2) {
		snprintf(err, errlen, "workdir %s: %s as slot user %s: the "
		    "slot users must be able to pass through it", workdir,
		    strerror(r[1]), user);
		return (-1);
	}
	if (n != (ssize_t)sizeof(r) || r[0] < 0 || (size_t)r[0] >= ks->ks_n)
		return (0);
	kc = &ks->ks_v[r[0]];
	snprintf(err, errlen, "kind %s: %s: %s as slot user %s: the slot "
	    "users must be able to run a kind's program", kc->kc_name,
	    kc->kc_argv[0], strerror(r[1]), user);
	return (-1);
}

/*
 * The users the process kinds of c run as, one per execution thread
 * (slot_users, workerd.conf(5)): slot_users followed by 0 .. cpus - 1, in
 * a malloc'd array of cpus in *out; NULL for workerd's own user (no
 * process kind, or slot_users = none).  -1 with err naming what is
 * missing or wrong: users that do not exist, one that is root or
 * workerd's user or in workerd's group (which may read its key), two
 * slots with one uid, and with caps, the capabilities workerd needs to
 * become them and to signal and clean up after them.  A workerd running
 * as root refuses slot_users = none unless run_as_root says so.
 */
int
kinds_slot_users(const struct workerd_config *c, int caps,
    struct ext_cred **out, char *err, size_t errlen)
{
	struct ext_cred	*cr;
	struct passwd	 pw, *res;
	char		 name[64], buf[4096], missing[256], lack[128];
	unsigned	 n, i, j, nmissing = 0;
	const char	*why = NULL, *how;

	*out = NULL;
	if (!kinds_have_process(c->kinds))
		return (0);
	if (strcmp(c->slot_users, "none") == 0) {
		if (geteuid() != 0 || c->run_as_root)
			return (0);
		snprintf(err, errlen, "workerd runs as root with slot_users = "
		    "none: the configured kinds would run as root; name slot "
		    "users (slot_users, workerd.conf(5)) or set run_as_root = "
		    "yes");
		return (-1);
	}
	n = c->cpus > 0 ? c->cpus : cpus_detect(&how);
	cr = xcalloc(n, sizeof(*cr));
	missing[0] = '\0';
	for (i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "%.*s%u", SLOT_PREFIX_MAX,
		    c->slot_users, i);
		if (getpwnam_r(name, &pw, buf, sizeof(buf), &res) != 0 ||
		    res == NULL) {
			if (nmissing++ < 4)
				snprintf(missing + strlen(missing),
				    sizeof(missing) - strlen(missing), "%s%s",
				    nmissing > 1 ? ", " : "", name);
			continue;
		}
		if (pw.pw_uid == 0 || pw.pw_gid == 0)
			why = "is root or in group root";
		else if (pw.pw_uid == geteuid())
			why = "is workerd's own user";
		else if (pw.pw_gid == getegid())
			why = "is in workerd's group, which may read its key";
		for (j = 0; why == NULL && j < i; j++)
			if (cr[j].cr_uid == pw.pw_uid)
				why = "has the uid of another slot's user";
		if (why != NULL) {
			snprintf(err, errlen, "slot user %s (uid %u, gid %u) "
			    "%s: each slot needs a user of its own", name,
			    (unsigned)pw.pw_uid, (unsigned)pw.pw_gid, why);
			free(cr);
			return (-1);
		}
		cr[i].cr_uid = pw.pw_uid;
		cr[i].cr_gid = pw.pw_gid;
	}
	if (nmissing > 0) {
		snprintf(err, errlen, "slot users missing: %s%s (%u of the %u "
		    "users %s0 to %s%u that cpus = %u needs); create them "
		    "(r3q.sysusers, useradd --system), or set slot_users = "
		    "none to run the kinds as workerd's own user", missing,
		    nmissing > 4 ? ", ..." : "", nmissing, n, c->slot_users,
		    c->slot_users, n - 1, n);
		free(cr);
		return (-1);
	}
	if (caps && geteuid() != 0) {
		kinds_caps_missing(lack, sizeof(lack));
		if (lack[0] != '\0') {
			snprintf(err, errlen, "workerd (uid %u) lacks %s to run "
			    "the kinds as the slot users %s0 to %s%u: run it as "
			    "root or with those capabilities "
			    "(workerd.service's AmbientCapabilities=), or set "
			    "slot_users = none", (unsigned)geteuid(), lack,
			    c->slot_users, c->slot_users, n - 1);
			free(cr);
			return (-1);
		}
	}
	snprintf(name, sizeof(name), "%.*s0", SLOT_PREFIX_MAX, c->slot_users);
	if (kinds_slot_access(c->kinds, c->workdir, &cr[0], name, err,
	    errlen) == -1) {
		free(cr);
		return (-1);
	}
	*out = cr;
	return (0);
}

/* Drop a reference to k; the last one closes it. */
void
kinds_unref(struct ext_kind *k)
{
	if (k != NULL && atomic_fetch_sub(&k->k_refs, 1) == 1)
		ext_close(k);
}

/*
 * Free a task and the output its result owns, and let go of its kind.
 * Here, beside kinds_unref(), rather than in exec.c, so that what links
 * the kinds without the execution threads (fuzz/workerd.c) has it too.
 */
void
wtask_free(struct wtask *t)
{
	if (t == NULL)
		return;
	task_result_free(&t->wt_res);
	kinds_unref(t->wt_ext);
	if (t->wt_kind_owned)
		free(t->wt_kind);
	free(t);
}

/* Free a list of news (exec.c's, link.c's). */
void
exec_news_free(struct wnewslist *nl)
{
	struct wnews	*n;

	while ((n = TAILQ_FIRST(nl)) != NULL) {
		TAILQ_REMOVE(nl, n, wn_entry);
		free(n);
	}
}

/* Does the kind k run exactly what n would? */
static int
kinds_same(const struct ext_kind *k, const struct ext_kind *n)
{
	return (strcmp(k->k_name, n->k_name) == 0 && k->k_type == n->k_type &&
	    strv_eq(k->k_argv, n->k_argv) && strv_eq(k->k_env, n->k_env) &&
	    strcmp(k->k_workdir, n->k_workdir) == 0 &&
	    k->k_timeout == n->k_timeout && k->k_grace == n->k_grace &&
	    k->k_nslots == n->k_nslots &&
	    (k->k_creds == NULL) == (n->k_creds == NULL) &&
	    (k->k_creds == NULL || memcmp(k->k_creds, n->k_creds,
	    k->k_nslots * sizeof(*k->k_creds)) == 0));
}

/* Free a kind that was never opened. */
static void
kinds_discard(struct ext_kind *k)
{
	strv_free(k->k_argv);
	strv_free(k->k_env);
	free(k->k_workdir);
	free(k->k_creds);
	free(k);
}

/*
 * Make the configured kinds of c the table: kinds whose definition did
 * not change are kept as they are, new and changed ones opened (a plugin
 * loaded and its init called).  Nothing changes if one fails to open:
 * -1 with err naming it.  *changed says whether the set of names did.
 */
int
kinds_apply(const struct workerd_config *c, int *changed, char *err,
    size_t errlen)
{
	const struct kinds_conf	*ks = c->kinds;
	const struct kind_conf	*kc;
	struct ext_kind		**v, *k;
	struct ext_cred		*creds;
	size_t			 i, j, n;
	char			 msg[512];

	if (kinds_slot_users(c, 1, &creds, err, errlen) == -1)
		return (-1);
	n = ks != NULL ? ks->ks_n : 0;
	v = xcalloc(n + 1, sizeof(*v));
	for (i = 0; i < n; i++) {
		kc = &ks->ks_v[i];
		k = xcalloc(1, sizeof(*k));
		snprintf(k->k_name, sizeof(k->k_name), "%s", kc->kc_name);
		k->k_type = kc->kc_type;
		k->k_argv = strv_dup(kc->kc_argv);
		k->k_env = kinds_env(ks, kc);
		k->k_workdir = xstrdup(c->workdir);
		k->k_timeout = kc->kc_timeout;
		k->k_grace = kc->kc_has_grace ? kc->kc_grace : c->kill_grace;
		k->k_nslots = c->cpus;
		if (creds != NULL && (k->k_type == EXT_EXEC ||
		    k->k_type == EXT_PERSISTENT)) {
			k->k_creds = xcalloc(c->cpus, sizeof(*creds));
			memcpy(k->k_creds, creds, c->cpus * sizeof(*creds));
		}
		atomic_init(&k->k_refs, 1);
		/* A withdrawn kind is opened again: a reload retries it. */
		for (j = 0; j < kt_n; j++)
			if (kinds_same(kt_v[j], k) &&
			    kt_v[j]->k_unavail[0] == '\0')
				break;
		if (j < kt_n) {
			kinds_discard(k);
			k = kt_v[j];
			atomic_fetch_add(&k->k_refs, 1);
		} else if (ext_open(k, msg, sizeof(msg)) == -1) {
			snprintf(err, errlen, "kind %s: %s", kc->kc_name, msg);
			kinds_discard(k);
			while (i-- > 0)
				kinds_unref(v[i]);
			free(v);
			free(creds);
			return (-1);
		}
		v[i] = k;
	}
	*changed = n != kt_n;
	for (i = 0; i < n && !*changed; i++)
		if (strcmp(v[i]->k_name, kt_v[i]->k_name) != 0 ||
		    kt_v[i]->k_unavail[0] != '\0')
			*changed = 1;
	free(creds);
	for (j = 0; j < kt_n; j++)
		kinds_unref(kt_v[j]);
	free(kt_v);
	kt_v = v;
	kt_n = n;
	return (0);
}

/* Drop the table (workerd stops): kinds close once their tasks are done. */
void
kinds_clear(void)
{
	size_t	 i;

	for (i = 0; i < kt_n; i++)
		kinds_unref(kt_v[i]);
	free(kt_v);
	kt_v = NULL;
	kt_n = 0;
}

/*
 * The configured kind called name with a reference for the caller, or
 * NULL when it is not one (a built-in kind, or unknown).
 */
struct ext_kind *
kinds_get(const char *name)
{
	size_t	 i;

	for (i = 0; i < kt_n; i++)
		if (strcmp(kt_v[i]->k_name, name) == 0) {
			atomic_fetch_add(&kt_v[i]->k_refs, 1);
			return (kt_v[i]);
		}
	return (NULL);
}

/*
 * Every kind's name offered, built-in first, in a malloc'd array of *n
 * the caller frees (the names are borrowed: valid until the next reload).
 * A withdrawn kind is left out.
 */
char **
kinds_names(size_t *n)
{
	const struct task_kind	*bk;
	char			**v;
	size_t			 nb, i;

	bk = task_kind_list(&nb);
	v = xcalloc(nb + kt_n + 1, sizeof(*v));
	for (i = 0; i < nb; i++)
		v[i] = (char *)(uintptr_t)bk[i].name;
	*n = nb;
	for (i = 0; i < kt_n; i++)
		if (kt_v[i]->k_unavail[0] == '\0')
			v[(*n)++] = kt_v[i]->k_name;
	return (v);
}

/*
 * The persistent process of kind name said it cannot run here ('U', the
 * task failed TASK_UNAVAILABLE with why): withdraw the kind from what is
 * offered until a reload opens it again.  1 if it was offered until now
 * (the caller tells the master), 0 if not (already withdrawn, or replaced
 * by a reload since the task began).
 */
int
kinds_withdraw(const char *name, const char *why)
{
	size_t	 i;

	for (i = 0; i < kt_n; i++)
		if (strcmp(kt_v[i]->k_name, name) == 0) {
			if (kt_v[i]->k_unavail[0] != '\0')
				return (0);
			snprintf(kt_v[i]->k_unavail,
			    sizeof(kt_v[i]->k_unavail), "%s",
			    why[0] != '\0' ? why : "unavailable");
			return (1);
		}
	return (0);
}

/*
 * The withdrawn kinds, for Hello and Kinds: *n of them in a malloc'd array
 * the caller frees; each is a kind's name, and why in (*whys)[i] (both
 * borrowed, valid until the next reload).
 */
char **
kinds_withdrawn(size_t *n, char ***whys)
{
	char	**v;
	size_t	 i;

	v = xcalloc(kt_n + 1, sizeof(*v));
	*whys = xcalloc(kt_n + 1, sizeof(**whys));
	for (i = *n = 0; i < kt_n; i++)
		if (kt_v[i]->k_unavail[0] != '\0') {
			v[*n] = kt_v[i]->k_name;
			(*whys)[(*n)++] = kt_v[i]->k_unavail;
		}
	return (v);
}

/*
 * rrdfloor: librrd's own cost of the writer benchmark's updates, for
 * bench/writer.sh. It updates FILES RRD files made by writerbench -mode
 * create (DIR/t000000.rrd, ...) with the VALUES rows of DS counters each
 * that writerbench spools for spoold and sends to rrdcached, the way
 * rrdcached's queue thread does it: one rrd_update_r(file, NULL, n, rows)
 * per file with all of its rows, nothing else (no protocol, no journal, no
 * spool). It prints on stdout
 *
 *   <values/s> <µs of CPU per file> <4 KiB pages read from the device per file>
 *
 * CPU is getrusage(RUSAGE_SELF), user + system of all threads, over the
 * updates only; the rows are formatted before the clock starts. Pages
 * read are this process's: /proc/self/io read_bytes over the updates
 * (librrd's page faults on its mapping, and its reads). With -c
 * (cold) every file is synced and dropped from the page cache
 * (posix_fadvise DONTNEED) first, as writerbench -cold does for the other
 * modes. THREADS threads (default 1) take the files in turn, as rrdcached's
 * -t threads and spoold's --writers do: librrd maps and unmaps each file,
 * and threads of one process share the mappings' lock and TLB shootdowns.
 *
 * Build: gcc -O2 -pthread -o rrdfloor bench/rrdfloor.c $(pkg-config --cflags --libs librrd)
 * Usage: rrdfloor [-c] DIR FILES DS VALUES [THREADS]
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <rrd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

/* The same constants and values as bench/writerbench. */
static const long long start = 1700000100LL;

static unsigned long long value(long i, long d, long v)
{
	return (unsigned long long)((i + d + 1) * 1000 + v * 300 * (d + 1));
}

static double cpu_seconds(void)
{
	struct rusage ru;
	if (getrusage(RUSAGE_SELF, &ru) != 0) {
		perror("rrdfloor: getrusage");
		exit(1);
	}
	return ru.ru_utime.tv_sec + ru.ru_stime.tv_sec +
	       (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

static double now_seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* read_bytes is /proc/self/io's read_bytes: bytes this process had read
 * from the storage layer. */
static long long read_bytes(void)
{
	FILE *f = fopen("/proc/self/io", "r");
	char line[128];
	long long n = -1;
	while (f && fgets(line, sizeof line, f))
		if (sscanf(line, "read_bytes: %lld", &n) == 1)
			break;
	if (f)
		fclose(f);
	return n;
}

/* drop writes path back and drops it from the page cache. */
static void drop(const char *path)
{
	int fd = open(path, O_RDONLY);
	if (fd < 0 || fdatasync(fd) != 0 ||
	    posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED) != 0) {
		fprintf(stderr, "rrdfloor: drop %s from the page cache: %s\n", path, strerror(errno));
		exit(1);
	}
	close(fd);
}

/* rows formats file i's rows as rrd_update takes them: "t:v:v:...". */
static char **rows(long i, long ds, long values)
{
	char **r = calloc(values, sizeof *r);
	size_t len = 24 + ds * 24;
	for (long v = 0; v < values; v++) {
		char *b = malloc(len);
		int n = snprintf(b, len, "%lld", start + v * 300);
		for (long d = 0; d < ds; d++)
			n += snprintf(b + n, len - n, ":%llu", value(i, d, v));
		r[v] = b;
	}
	return r;
}

static char **paths;
static char ***args;
static long files, values;
static atomic_long next;

/* updater updates files, taking the next one not taken, until none is left. */
static void *updater(void *unused)
{
	(void)unused;
	for (long i; (i = atomic_fetch_add(&next, 1)) < files;) {
		rrd_clear_error();
		if (rrd_update_r(paths[i], NULL, (int)values, (const char **)args[i]) != 0) {
			fprintf(stderr, "rrdfloor: update %s: %s\n", paths[i], rrd_get_error());
			exit(1);
		}
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int cold = 0;
	if (argc > 1 && strcmp(argv[1], "-c") == 0) {
		cold = 1;
		argv++, argc--;
	}
	if (argc != 5 && argc != 6) {
		fprintf(stderr, "usage: rrdfloor [-c] DIR FILES DS VALUES [THREADS]\n");
		return 2;
	}
	const char *dir = argv[1];
	long ds = atol(argv[3]), threads = argc == 6 ? atol(argv[5]) : 1;
	files = atol(argv[2]), values = atol(argv[4]);
	if (files <= 0 || ds <= 0 || values <= 0 || threads <= 0) {
		fprintf(stderr, "rrdfloor: FILES, DS, VALUES and THREADS must be positive\n");
		return 2;
	}
	paths = calloc(files, sizeof *paths);
	args = calloc(files, sizeof *args);
	pthread_t *tids = calloc(threads, sizeof *tids);
	for (long i = 0; i < files; i++) {
		if (asprintf(&paths[i], "%s/t%06ld.rrd", dir, i) < 0)
			return 1;
		args[i] = rows(i, ds, values);
	}
	sync();
	if (cold)
		for (long i = 0; i < files; i++)
			drop(paths[i]);
	long long r0 = read_bytes();
	double c0 = cpu_seconds(), t0 = now_seconds();
	for (long t = 0; t < threads; t++)
		if (pthread_create(&tids[t], NULL, updater, NULL) != 0) {
			fprintf(stderr, "rrdfloor: start thread: %s\n", strerror(errno));
			return 1;
		}
	for (long t = 0; t < threads; t++)
		pthread_join(tids[t], NULL);
	double el = now_seconds() - t0, cpu = cpu_seconds() - c0;
	double pages = (read_bytes() - r0) / 4096.0 / files;
	printf("%.0f %.0f %.1f\n", files * values * ds / el, cpu * 1e6 / files, pages);
	return 0;
}

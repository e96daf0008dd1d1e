// Command rrdcachedbench measures servers of rrdcached's protocol with one
// client, spoold's (package rrdcached): -files RRD files of -ds GAUGE data
// sources (step 1 s) are created with CREATE (not timed); then, per
// round, one BATCH of -updates UPDATEs per file, file after file (acked:
// the rate of acknowledged updates), and a FLUSH of every file (written:
// updates over the time from the first UPDATE until the last FLUSH
// returned). Then -kills times: another round of BATCHes, SIGKILL right
// after the last acknowledgement, a restart, a FLUSH of every file, and
// the acknowledged updates missing from the files counted from their
// headers (read in Go, not through the server). Each server runs with its
// own directory under -dir, started by the command of -rrdcached or
// -spoold (words split on spaces; {SOCK} {DIR} {WORK} replaced), which
// must stay in the foreground.
//
// It prints one line per server, "<name>: acked_per_s=<n>
// written_per_s=<n> acked_cpu_us=<n> written_cpu_us=<n> again_acked_per_s=<n>
// again_cpu_us=<n> open_acked_per_s=<n> open_cpu_us=<n> empty_flush_us=<n>
// lost=<n> kills=<n> acked=<n>" (the cpu figures: the server process's CPU
// time per update until the last acknowledgement and until the flush
// returned; again: the first kill round's acknowledgements, each file's
// second BATCH after a FLUSH took its first, -1 without kills; open: after
// the kill rounds, one untimed round of BATCHes and then a timed one with
// no FLUSH between, each file's next BATCH while the server still holds
// its last, as a client's stream looks between two writes of a file;
// empty_flush_us: a second FLUSH of every file, nothing pending, µs
// each), then the rrdcached_proto summary line when both ran.
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/prometheus/procfs"

	"github.com/spoold/spoold/rrd"
	"github.com/spoold/spoold/rrdcached"
)

var (
	work         = flag.String("dir", "", "work directory (one sub-directory per server)")
	files        = flag.Int("files", 10000, "RRD files")
	dsCount      = flag.Int("ds", 40, "data sources per file")
	updates      = flag.Int("updates", 12, "UPDATEs per file in one BATCH")
	kills        = flag.Int("kills", 1, "SIGKILL trials per server")
	rrdcachedCmd = flag.String("rrdcached", "rrdcached -g -l unix:{SOCK} -b {DIR} -B -R -F -j {WORK}/journal -p {WORK}/pid -w 3600 -f 7200",
		"rrdcached's command line (empty: skip)")
	spooldCmd = flag.String("spoold", "", "spoold's command line, e.g. \"spoold --listen unix:{SOCK} --rrd-dir {DIR} --spool-dir {WORK}/spool ...\" (empty: skip)")
)

// epoch is the first update's time (the files accept updates after it):
// just far enough back that the last round's updates are not in the
// future, so that the updates are dated now, as clients send them (a
// server holds them for its write delay, rrdcached's -w, as it holds a
// client's; older ones would be a backlog spoold writes at once).
var epoch int64

type result struct {
	acked, written float64 // per second
	// ackedCPU and writtenCPU are the server's CPU time (user and
	// system) per update until the last acknowledgement and until the
	// flush returned, in µs: what a loaded machine changes less than the
	// rates.
	ackedCPU, writtenCPU float64
	// again and againCPU are acked and ackedCPU of the first kill round:
	// each file's next BATCH, as a client sends one every interval (-1:
	// no kill round ran).
	again, againCPU float64
	// open and openCPU are acked and ackedCPU of a round whose files'
	// previous BATCH is still held by the server (no FLUSH between).
	open, openCPU float64
	// emptyFlush is a FLUSH of a file with nothing pending, in µs: the
	// round trip and the server's lookup, the least a FLUSH costs.
	emptyFlush  float64
	lost, kills int
	ackedTotal  int
}

func main() {
	log.SetFlags(0)
	flag.Parse()
	if *work == "" || *files < 1 || *dsCount < 1 || *updates < 1 || *kills < 0 {
		log.Fatal("rrdcachedbench: need -dir, and positive -files, -ds, -updates")
	}
	epoch = time.Now().Unix() - int64(rounds()**updates) - 1
	res := map[string]result{}
	for _, s := range []struct{ name, cmd string }{{"rrdcached", *rrdcachedCmd}, {"spoold", *spooldCmd}} {
		if s.cmd == "" {
			continue
		}
		r, err := runServer(s.name, s.cmd)
		if err != nil {
			log.Fatalf("rrdcachedbench: %s: %v", s.name, err)
		}
		res[s.name] = r
		fmt.Printf("%s: acked_per_s=%.0f written_per_s=%.0f acked_cpu_us=%.1f written_cpu_us=%.1f again_acked_per_s=%.0f again_cpu_us=%.1f open_acked_per_s=%.0f open_cpu_us=%.1f empty_flush_us=%.1f lost=%d kills=%d acked=%d\n",
			s.name, r.acked, r.written, r.ackedCPU, r.writtenCPU, r.again, r.againCPU, r.open, r.openCPU, r.emptyFlush, r.lost, r.kills, r.ackedTotal)
	}
	sp, ok1 := res["spoold"]
	rc, ok2 := res["rrdcached"]
	if ok1 && ok2 {
		fmt.Printf("rrdcached_proto: spoold_acked_per_s=%.0f rrdcached_acked_per_s=%.0f spoold_written_per_s=%.0f rrdcached_written_per_s=%.0f spoold_lost=%d rrdcached_lost=%d\n",
			sp.acked, rc.acked, sp.written, rc.written, sp.lost, rc.lost)
	}
}

// server is one server process of the benchmark.
type server struct {
	name, sock, dir, work string
	argv                  []string
	cmd                   *exec.Cmd
	done                  chan error
}

func runServer(name, cmdline string) (result, error) {
	wd := filepath.Join(*work, name)
	s := &server{name: name, sock: filepath.Join(wd, "sock"), dir: filepath.Join(wd, "rrd"), work: wd}
	for _, d := range []string{s.dir, filepath.Join(wd, "journal")} {
		if err := os.MkdirAll(d, 0o750); err != nil {
			return result{}, err
		}
	}
	r := strings.NewReplacer("{SOCK}", s.sock, "{DIR}", s.dir, "{WORK}", wd)
	s.argv = strings.Fields(r.Replace(cmdline))
	if err := s.start(); err != nil {
		return result{}, err
	}
	defer s.kill()
	c, err := rrdcached.NewClient("unix:"+s.sock, rrdcached.DefaultClientOptions())
	if err != nil {
		return result{}, err
	}
	defer c.Close()
	ctx := context.Background()
	if err := createFiles(ctx, c); err != nil {
		return result{}, err
	}
	var res result
	t0, cpu0 := time.Now(), s.cpu()
	acked, err := round(ctx, c, 0)
	if err != nil {
		return result{}, err
	}
	res.acked = float64(acked) / time.Since(t0).Seconds()
	res.ackedCPU = float64((s.cpu() - cpu0).Microseconds()) / float64(acked)
	if err := flushAll(ctx, c); err != nil {
		return result{}, err
	}
	res.written = float64(acked) / time.Since(t0).Seconds()
	res.writtenCPU = float64((s.cpu() - cpu0).Microseconds()) / float64(acked)
	t1 := time.Now()
	if err := flushAll(ctx, c); err != nil { // every file written: nothing pending
		return result{}, err
	}
	res.emptyFlush = float64(time.Since(t1).Microseconds()) / float64(*files)
	res.ackedTotal = acked
	res.again, res.againCPU = -1, -1
	for k := 1; k <= *kills; k++ {
		t0, cpu0 := time.Now(), s.cpu()
		n, err := round(ctx, c, k)
		if err != nil {
			return result{}, err
		}
		if k == 1 {
			res.again = float64(n) / time.Since(t0).Seconds()
			res.againCPU = float64((s.cpu() - cpu0).Microseconds()) / float64(n)
		}
		s.kill() // right after the last acknowledgement
		c.Close()
		// The restart replays what the server kept (rrdcached its journal,
		// spoold its spool); its shutdown writes it all (-F, the shutdown
		// flush); then the files show what survived.
		if err := s.start(); err != nil {
			return result{}, err
		}
		if err := s.stop(); err != nil {
			return result{}, err
		}
		lost, err := s.missing(k)
		if err != nil {
			return result{}, err
		}
		if err := s.start(); err != nil {
			return result{}, err
		}
		res.lost += lost
		res.kills++
		res.ackedTotal += n
	}
	// Two more rounds with no FLUSH between: each file's second BATCH
	// finds its first still held (spoold: its open segment).
	if _, err := round(ctx, c, *kills+1); err != nil {
		return result{}, err
	}
	t0, cpu0 = time.Now(), s.cpu()
	n, err := round(ctx, c, *kills+2)
	if err != nil {
		return result{}, err
	}
	res.open = float64(n) / time.Since(t0).Seconds()
	res.openCPU = float64((s.cpu() - cpu0).Microseconds()) / float64(n)
	return res, nil
}

// rounds is how many rounds of BATCHes a server is sent: the first, the
// kill rounds, and the two of the open measurement.
func rounds() int { return *kills + 3 }

func fileName(i int) string { return fmt.Sprintf("d%02d/f%05d.rrd", i%100, i) }

// createFiles creates the files with CREATE, in BATCHes of 100.
func createFiles(ctx context.Context, c *rrdcached.Client) error {
	var defs []string
	for j := 0; j < *dsCount; j++ {
		defs = append(defs, fmt.Sprintf("DS:v%d:GAUGE:86400:U:U", j))
	}
	// Rows for every update of every round, and a margin.
	defs = append(defs, fmt.Sprintf("RRA:LAST:0:1:%d", rounds()**updates+10))
	var cmds []string
	for i := 0; i < *files; i++ {
		cmds = append(cmds, rrdcached.CreateLine(fileName(i), rrdcached.CreateArgs{Step: time.Second, Begin: time.Unix(epoch, 0), NoOverwrite: true, Defs: defs}))
		if len(cmds) == 100 || i == *files-1 {
			errs, err := c.Batch(ctx, cmds)
			if err != nil {
				return err
			}
			if len(errs) > 0 {
				return fmt.Errorf("create: command %d: %s", errs[0].Command, errs[0].Message)
			}
			cmds = cmds[:0]
		}
	}
	return nil
}

// stamp is the time of update u (0-based) of round k.
func stamp(k, u int) int64 { return epoch + 1 + int64(k**updates+u) }

// round sends one BATCH of -updates UPDATEs per file and returns how many
// updates were acknowledged.
func round(ctx context.Context, c *rrdcached.Client, k int) (int, error) {
	vals := make([]string, *dsCount)
	cmds := make([]string, *updates)
	acked := 0
	for i := 0; i < *files; i++ {
		for u := range cmds {
			for j := range vals {
				vals[j] = strconv.Itoa((i + j + u) % 1000)
			}
			cmds[u] = rrdcached.UpdateLine(fileName(i), strconv.FormatInt(stamp(k, u), 10)+":"+strings.Join(vals, ":"))
		}
		errs, err := c.Batch(ctx, cmds)
		if err != nil {
			return acked, err
		}
		if len(errs) > 0 {
			return acked, fmt.Errorf("round %d, %s: command %d: %s", k, fileName(i), errs[0].Command, errs[0].Message)
		}
		acked += len(cmds)
	}
	return acked, nil
}

// flushAll sends FLUSH of every file; each returns once the file is
// written.
func flushAll(ctx context.Context, c *rrdcached.Client) error {
	for i := 0; i < *files; i++ {
		if err := c.Flush(ctx, fileName(i)); err != nil {
			return err
		}
	}
	return nil
}

// missing counts the updates of round k that their files do not show,
// from the files' headers.
func (s *server) missing(k int) (int, error) {
	root, err := rrd.OpenRoot(s.dir)
	if err != nil {
		return 0, err
	}
	defer root.Close()
	lost := 0
	for i := 0; i < *files; i++ {
		fi, err := root.Info(filepath.Join(s.dir, fileName(i)))
		if err != nil {
			return 0, err
		}
		for u := 0; u < *updates; u++ {
			if stamp(k, u) > fi.Last {
				lost++
			}
		}
	}
	return lost, nil
}

func (s *server) start() error {
	os.Remove(s.sock)
	out, err := os.OpenFile(filepath.Join(s.work, "log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o640)
	if err != nil {
		return err
	}
	defer out.Close()
	s.cmd = exec.Command(s.argv[0], s.argv[1:]...)
	s.cmd.Stdout, s.cmd.Stderr = out, out
	if err := s.cmd.Start(); err != nil {
		return fmt.Errorf("start %v: %w", s.argv, err)
	}
	s.done = make(chan error, 1)
	go func(cmd *exec.Cmd, done chan error) { done <- cmd.Wait() }(s.cmd, s.done)
	deadline := time.Now().Add(10 * time.Minute) // a restart may replay a long journal
	for {
		// Answered, not only connected: rrdcached listens before it
		// replays its journal and installs its signal handlers, and a
		// SIGTERM in between kills it.
		if err := answers(s.sock, deadline); err == nil {
			return nil
		}
		select {
		case err := <-s.done:
			s.cmd = nil
			return fmt.Errorf("%v exited at start (%v); see %s", s.argv, err, filepath.Join(s.work, "log"))
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			s.kill()
			return errors.New("the server does not accept connections on " + s.sock)
		}
	}
}

// answers reports whether the server at sock answers STATS before
// deadline.
func answers(sock string, deadline time.Time) error {
	c, err := net.Dial("unix", sock)
	if err != nil {
		return err
	}
	defer c.Close()
	c.SetDeadline(deadline)
	if _, err := c.Write([]byte("STATS\n")); err != nil {
		return err
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return err
	}
	if n, _, _ := strings.Cut(line, " "); n == "" || strings.Trim(n, "0123456789") != "" {
		return fmt.Errorf("STATS answered %q", line)
	}
	return nil
}

// stop sends SIGTERM and waits for the exit (at most 30 minutes: the
// shutdown writes every file).
func (s *server) stop() error {
	s.cmd.Process.Signal(syscall.SIGTERM)
	defer func() { s.cmd = nil }()
	select {
	case err := <-s.done:
		if err != nil {
			return fmt.Errorf("%v after SIGTERM: %w; see %s", s.argv, err, filepath.Join(s.work, "log"))
		}
		return nil
	case <-time.After(30 * time.Minute):
		s.cmd.Process.Kill()
		<-s.done
		return errors.New("the server did not exit within 30 minutes of SIGTERM")
	}
}

// cpu is the server process's user and system time so far (0 if it
// cannot be read).
func (s *server) cpu() time.Duration {
	p, err := procfs.NewProc(s.cmd.Process.Pid)
	if err != nil {
		return 0
	}
	st, err := p.Stat()
	if err != nil {
		return 0
	}
	return time.Duration(st.CPUTime() * float64(time.Second))
}

func (s *server) kill() {
	if s.cmd == nil {
		return
	}
	s.cmd.Process.Signal(syscall.SIGKILL)
	<-s.done
	s.cmd = nil
}

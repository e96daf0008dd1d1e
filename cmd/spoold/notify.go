package main

import (
	"context"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	// The protocol is a few lines (one unixgram datagram to
	// $NOTIFY_SOCKET, '@' for an abstract name, which net.DialUnix
	// handles), but go-systemd's daemon package is what etcd and others
	// use, imports only the standard library and x/sys (already ours), and
	// gets the edges right that a hand-written copy tends to miss:
	// WATCHDOG_PID naming another process (a watchdog meant for a parent
	// shell), a malformed WATCHDOG_USEC, and MONOTONIC_USEC should spoold
	// ever send RELOADING=1 (Type=notify-reload).
	sddaemon "github.com/coreos/go-systemd/v22/daemon"
)

// The systemd side of the daemon's life (Type=notify, sd_notify(3)):
// READY=1 once the spool is locked, the admin server listens and the
// loops run (the starting process of a detached `spoold rrdcached` is
// told at the same point); WATCHDOG=1 every half WATCHDOG_USEC while the
// loops are alive (see liveness); STOPPING=1 when a signal ends the
// daemon. Without $NOTIFY_SOCKET (not started by systemd) nothing is sent.

// Liveness bounds: a loop that has not shown progress for this long is
// stuck, and the watchdog stops pinging so that systemd restarts spoold.
const (
	// writerStall: the writer's loop wakes every second (its Tick) and
	// only takes batches and retries removals before it sleeps again;
	// a minute without a wake is a hung file system or a deadlock.
	writerStall = time.Minute
	// pollerSlack is added to two poll intervals: a cycle ends at most
	// --poll-cycle-timeout (at most one interval) after it starts, and
	// starts at most one interval after the previous one started.
	pollerSlack = time.Minute
)

// liveness is what the watchdog knows of the daemon's loops: when the
// writer's loop last woke and the poller last ended a cycle (Unix
// nanoseconds, set by their hooks), and whether the loop goroutines still
// run. The loader is only required to run: a walk of a large spool sleeps
// and walks for as long as its parameters say (nginx's 3,072 s).
type liveness struct {
	writer, poller atomic.Int64
	pollInterval   time.Duration
	loops          map[string]<-chan struct{} // closed when that loop returned
}

func (l *liveness) writerWoke()  { l.writer.Store(time.Now().UnixNano()) }
func (l *liveness) pollerCycle() { l.poller.Store(time.Now().UnixNano()) }

// check returns nil while every loop is alive at now, else what is not.
func (l *liveness) check(now time.Time) error {
	for name, done := range l.loops {
		select {
		case <-done:
			return fmt.Errorf("the %s loop has returned", name)
		default:
		}
	}
	if since := now.Sub(time.Unix(0, l.writer.Load())); since > writerStall {
		return fmt.Errorf("the writer loop has not woken for %s", since.Round(time.Second))
	}
	if since, limit := now.Sub(time.Unix(0, l.poller.Load())), 2*l.pollInterval+pollerSlack; since > limit {
		return fmt.Errorf("the poller has not ended a cycle for %s (limit %s)", since.Round(time.Second), limit)
	}
	return nil
}

// notifier is the daemon's side of Type=notify: ready, then the watchdog,
// then stopping. Its one goroutine is the watchdog's, ended by stopping.
type notifier struct {
	log    *slog.Logger
	cancel context.CancelFunc
	done   chan struct{}
}

// notifyReady sends READY=1 and starts the watchdog if systemd asked for
// one. Call it once the daemon's loops run (start).
func (d *daemon) notifyReady() *notifier {
	n := &notifier{log: d.component("systemd"), cancel: func() {}}
	if err := detachedReady(); err != nil { // `spoold rrdcached` without -g (detach.go)
		d.log.Warn("tell the starting process that the daemon serves", "err", err)
	}
	n.send(sddaemon.SdNotifyReady)
	every, err := sddaemon.SdWatchdogEnabled(false)
	if err != nil {
		n.log.Warn("systemd watchdog off", "err", err)
	}
	if every <= 0 {
		return n
	}
	now := time.Now().UnixNano()
	d.live.writer.Store(now)
	d.live.poller.Store(now)
	d.live.pollInterval = d.cfg.poller.Interval
	d.live.loops = map[string]<-chan struct{}{"writer": d.writeDone, "poller": d.pollDone, "loader": d.loadDone}
	ctx, cancel := context.WithCancel(context.Background())
	n.cancel, n.done = cancel, make(chan struct{})
	go n.watchdog(ctx, &d.live, every/2)
	n.log.Info("systemd watchdog on", "timeout", every, "ping_every", every/2)
	return n
}

// watchdog sends WATCHDOG=1 every tick while l says the loops are alive,
// and logs when they stop being so (and when they are again).
func (n *notifier) watchdog(ctx context.Context, l *liveness, tick time.Duration) {
	defer close(n.done)
	t := time.NewTicker(tick)
	defer t.Stop()
	var stalled error
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			err := l.check(now)
			switch {
			case err == nil:
				n.send(sddaemon.SdNotifyWatchdog)
			case stalled == nil:
				n.log.Error("not alive: systemd watchdog pings stop, systemd will restart spoold", "err", err)
			}
			if err == nil && stalled != nil {
				n.log.Info("alive again: systemd watchdog pings resume")
			}
			stalled = err
		}
	}
}

// stopping ends the watchdog (systemd does not watch a stopping unit:
// TimeoutStopSec bounds the shutdown flush) and sends STOPPING=1.
func (n *notifier) stopping() {
	n.cancel()
	if n.done != nil {
		<-n.done
	}
	n.send(sddaemon.SdNotifyStopping)
}

func (n *notifier) send(state string) {
	if _, err := sddaemon.SdNotify(false, state); err != nil {
		n.log.Warn("notify systemd", "err", fmt.Errorf("send %q to $NOTIFY_SOCKET: %w", state, err))
	}
}

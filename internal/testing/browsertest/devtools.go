package browsertest

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"testing"
	"time"
)

// Browser is one headless Chromium driven over the DevTools protocol on a
// pipe (--remote-debugging-pipe: requests on its descriptor 3, replies and
// events on 4, each a JSON message ended by a NUL byte), with one page
// open. Its methods fail the test on any error. It owns one goroutine, the
// reader of the replies, which ends with the browser; Close (registered as
// a cleanup by Start) waits for both.
type Browser struct {
	t       testing.TB
	ctx     context.Context
	cancel  context.CancelFunc
	cmd     *exec.Cmd
	out     *os.File
	done    chan struct{} // closed when the reader ends
	session string        // the page's DevTools session

	mu      sync.Mutex
	next    int
	pending map[int]chan devtoolsMessage
	loads   int           // Page.loadEventFired events seen
	loaded  chan struct{} // closed and renewed at each one
	closed  bool
}

type devtoolsMessage struct {
	ID        int             `json:"id,omitempty"`
	Method    string          `json:"method,omitempty"`
	Params    any             `json:"params,omitempty"`
	SessionID string          `json:"sessionId,omitempty"`
	Result    json.RawMessage `json:"result,omitempty"`
	Error     *struct {
		Message string `json:"message"`
	} `json:"error,omitempty"`
}

// Start starts headless Chromium with args and the flags Run adds, bounded
// by a timeout, and opens one blank page.
func Start(t testing.TB, bin string, args ...string) *Browser {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	cmdIn, in, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	out, cmdOut, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(ctx, bin, append(append(baseFlags(t), "--remote-debugging-pipe"), args...)...)
	cmd.ExtraFiles = []*os.File{cmdIn, cmdOut}
	cmd.WaitDelay = 5 * time.Second
	err = cmd.Start()
	cmdIn.Close()
	cmdOut.Close()
	if err != nil {
		cancel()
		t.Fatalf("start chromium: %v", err)
	}
	b := &Browser{t: t, ctx: ctx, cancel: cancel, cmd: cmd, out: in, done: make(chan struct{}),
		pending: map[int]chan devtoolsMessage{}, loaded: make(chan struct{})}
	go b.read(out)
	t.Cleanup(b.Close)
	var target struct{ TargetID string }
	b.call("", "Target.createTarget", map[string]any{"url": "about:blank"}, &target)
	var attached struct{ SessionID string }
	b.call("", "Target.attachToTarget", map[string]any{"targetId": target.TargetID, "flatten": true}, &attached)
	b.session = attached.SessionID
	b.call(b.session, "Page.enable", nil, nil)
	return b
}

// read hands each reply to its caller and counts the page's loads, until
// the browser closes its end of the pipe.
func (b *Browser) read(r *os.File) {
	defer close(b.done)
	defer r.Close()
	br := bufio.NewReader(r)
	for {
		line, err := br.ReadBytes(0)
		if err != nil {
			return
		}
		var m devtoolsMessage
		if json.Unmarshal(line[:len(line)-1], &m) != nil {
			continue
		}
		b.mu.Lock()
		if c, ok := b.pending[m.ID]; ok && m.ID != 0 {
			delete(b.pending, m.ID)
			c <- m
		}
		if m.Method == "Page.loadEventFired" && m.SessionID == b.session {
			b.loads++
			close(b.loaded)
			b.loaded = make(chan struct{})
		}
		b.mu.Unlock()
	}
}

// call sends one request (to the page's session, or to the browser for "")
// and decodes its result into result, if not nil.
func (b *Browser) call(session, method string, params, result any) {
	b.t.Helper()
	c := make(chan devtoolsMessage, 1)
	b.mu.Lock()
	b.next++
	id := b.next
	b.pending[id] = c
	b.mu.Unlock()
	msg, err := json.Marshal(devtoolsMessage{ID: id, Method: method, Params: params, SessionID: session})
	if err == nil {
		_, err = b.out.Write(append(msg, 0))
	}
	if err != nil {
		b.t.Fatalf("chromium %s: %v", method, err)
	}
	select {
	case m := <-c:
		if m.Error != nil {
			b.t.Fatalf("chromium %s: %s", method, m.Error.Message)
		}
		if result != nil {
			if err := json.Unmarshal(m.Result, result); err != nil {
				b.t.Fatalf("chromium %s: decode %s: %v", method, m.Result, err)
			}
		}
	case <-b.done:
		b.t.Fatalf("chromium %s: the browser ended", method)
	case <-b.ctx.Done():
		b.t.Fatalf("chromium %s: %v", method, b.ctx.Err())
	}
}

// Navigate loads url in the page and waits for its load event.
func (b *Browser) Navigate(url string) {
	b.t.Helper()
	b.waitLoad(func() { b.call(b.session, "Page.navigate", map[string]any{"url": url}, nil) })
}

// waitLoad runs action and waits for the page's next load event.
func (b *Browser) waitLoad(action func()) {
	b.t.Helper()
	b.mu.Lock()
	loaded := b.loaded
	b.mu.Unlock()
	action()
	select {
	case <-loaded:
	case <-b.done:
		b.t.Fatal("chromium ended before the page loaded")
	case <-b.ctx.Done():
		b.t.Fatalf("the page did not load: %v", b.ctx.Err())
	}
}

// Eval evaluates a JavaScript expression in the page, waits for it if it
// is a promise, and decodes its value into result, if not nil.
func (b *Browser) Eval(expr string, result any) {
	b.t.Helper()
	var r struct {
		Result           struct{ Value json.RawMessage }
		ExceptionDetails *struct {
			Text      string
			Exception struct{ Description string }
		}
	}
	b.call(b.session, "Runtime.evaluate", map[string]any{"expression": expr, "awaitPromise": true, "returnByValue": true}, &r)
	if r.ExceptionDetails != nil {
		b.t.Fatalf("evaluate %s: %s %s", expr, r.ExceptionDetails.Text, r.ExceptionDetails.Exception.Description)
	}
	if result != nil {
		if err := json.Unmarshal(r.Result.Value, result); err != nil {
			b.t.Fatalf("evaluate %s: decode %s: %v", expr, r.Result.Value, err)
		}
	}
}

// Click scrolls the first element matching the CSS selector into view and
// clicks its middle with the mouse, failing if another element is on top
// of it there.
func (b *Browser) Click(selector string) {
	b.t.Helper()
	sel, _ := json.Marshal(selector)
	var at struct {
		X, Y float64
		Hit  bool
	}
	b.Eval(fmt.Sprintf(`(() => { const e = document.querySelector(%s);
		if (!e) return {X: 0, Y: 0, Hit: false};
		e.scrollIntoView({block: "center"});
		const r = e.getBoundingClientRect(), x = r.x + r.width / 2, y = r.y + r.height / 2;
		const top = document.elementFromPoint(x, y);
		return {X: x, Y: y, Hit: top === e || e.contains(top)}; })()`, sel), &at)
	if !at.Hit {
		b.t.Fatalf("click %s: no such element in view", selector)
	}
	for _, typ := range []string{"mousePressed", "mouseReleased"} {
		b.call(b.session, "Input.dispatchMouseEvent", map[string]any{"type": typ, "x": at.X, "y": at.Y,
			"button": "left", "clickCount": 1}, nil)
	}
}

// ClickAndWait clicks as Click does and waits for the page that the click
// loads.
func (b *Browser) ClickAndWait(selector string) {
	b.t.Helper()
	b.waitLoad(func() { b.Click(selector) })
}

// Type clicks the input matching the selector, selects its text and types
// text over it.
func (b *Browser) Type(selector, text string) {
	b.t.Helper()
	b.Click(selector)
	sel, _ := json.Marshal(selector)
	b.Eval(fmt.Sprintf(`document.querySelector(%s).select()`, sel), nil)
	b.call(b.session, "Input.insertText", map[string]any{"text": text}, nil)
}

// Close closes the browser and waits for it and the reader; it is safe to
// call twice.
func (b *Browser) Close() {
	b.mu.Lock()
	closed := b.closed
	b.closed = true
	b.mu.Unlock()
	if closed {
		return
	}
	msg, _ := json.Marshal(devtoolsMessage{ID: -1, Method: "Browser.close"})
	b.out.Write(append(msg, 0))
	b.out.Close()
	select {
	case <-b.done:
	case <-time.After(10 * time.Second):
		b.cancel() // kills chromium, which ends the reader
		<-b.done
	}
	err := b.cmd.Wait()
	b.cancel()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		b.t.Errorf("chromium: %v", err)
	}
}

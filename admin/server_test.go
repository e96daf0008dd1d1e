package admin

import (
	"context"
	"io"
	"net"
	"net/http"
	"testing"
)

func TestServerLifecycle(t *testing.T) {
	o := testOptions()
	o.Listen = "127.0.0.1:0"
	s := NewServer(newFakeDaemon(okTarget("a")), o)
	if s.Addr() != "" {
		t.Errorf("Addr before Start = %q", s.Addr())
	}
	if err := s.Start(nil); err != nil {
		t.Fatal(err)
	}
	if err := s.Start(nil); err == nil {
		t.Errorf("second Start succeeded")
	}
	resp, err := http.Get("http://" + s.Addr() + "/status")
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("GET /status: %d", resp.StatusCode)
	}
	http.DefaultClient.CloseIdleConnections()
	if err := s.Shutdown(context.Background()); err != nil {
		t.Errorf("Shutdown: %v", err)
	}
	if err := s.Shutdown(context.Background()); err != nil {
		t.Errorf("second Shutdown: %v", err)
	}
	if _, err := http.Get("http://" + s.Addr() + "/status"); err == nil {
		t.Errorf("server still answers after Shutdown")
	}
}

func TestServerGivenListenerAndEarlyShutdown(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := NewServer(newFakeDaemon(), testOptions())
	if err := s.Start(ln); err != nil {
		t.Fatal(err)
	}
	if s.Addr() != ln.Addr().String() {
		t.Errorf("Addr = %q, want %q", s.Addr(), ln.Addr())
	}
	if err := s.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}

	never := NewServer(newFakeDaemon(), testOptions())
	if err := never.Shutdown(context.Background()); err != nil {
		t.Errorf("Shutdown before Start: %v", err)
	}
	if err := never.Start(nil); err == nil {
		t.Errorf("Start after Shutdown succeeded")
	}
}

package rrdcached

import "testing"

// TestEveryCommandHandled: each command a client may send has a handler or
// is answered by the connection itself (run's special cases), and every
// handler is a command of the table.
func TestEveryCommandHandled(t *testing.T) {
	special := map[string]bool{"QUIT": true, "BATCH": true, ".": true, "HELP": true, "PING": true}
	for _, c := range commands {
		if c.where&(inClient|inBatch) == 0 {
			continue // WROTE: journal replay only
		}
		if handlers[c.name] == nil && !special[c.name] {
			t.Errorf("command %s has no handler", c.name)
		}
	}
	for name := range handlers {
		if c := lookupCommand(name); c == nil || c.name != name {
			t.Errorf("handler %s is not a command of the table", name)
		}
	}
}

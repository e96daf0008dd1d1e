package poller_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/spoold/spoold/poller"
)

// TestSnmpErrorsSayWhatTheyMean: against net-snmp's snmpd, a wrong
// community reads as a timeout that says what it may mean, with the
// retries configured; the SNMPv3 reports are named.
func TestSnmpErrorsSayWhatTheyMean(t *testing.T) {
	port := startSnmpd(t)
	lines := fmt.Sprintf("wrong-community 127.0.0.1:%d profile=if-mib:1 community=nope timeout=200ms retries=1\n", port) +
		fmt.Sprintf("unknown-user 127.0.0.1:%d profile=if-mib:1 version=3 user=nobody-here auth=SHA auth-pass=%s priv=AES priv-pass=%s timeout=300ms retries=0\n", port, v3AuthPass, v3PrivPass) +
		fmt.Sprintf("wrong-digest 127.0.0.1:%d profile=if-mib:1 version=3 user=%s auth=SHA auth-pass=not-the-pass priv=AES priv-pass=%s timeout=300ms retries=0\n", port, v3User, v3PrivPass)
	po := pollOptions()
	po.BackoffAfter = 10
	p, err := poller.New(po, parseOne(t, lines), openSpool(t), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		p.Cycle(context.Background())
	}
	for name, want := range map[string]string{
		"wrong-community": "request timeout: no answer in 200ms with 1 retries: device down, or wrong community / ACL / port",
		"unknown-user":    `SNMPv3 report unknownUserName: the agent has no user "nobody-here"`,
		"wrong-digest":    "SNMPv3 report wrongDigest: wrong auth passphrase or auth protocol",
	} {
		s, _ := p.Status(name)
		if !strings.Contains(s.LastError, want) {
			t.Errorf("%s: error %q, want %q", name, s.LastError, want)
		}
	}
}

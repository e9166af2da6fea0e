package stapi

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestThrottledLogHoldsBackRepeats(t *testing.T) {
	var lines []string
	l := NewThrottledLog(func(f string, a ...any) { lines = append(lines, fmt.Sprintf(f, a...)) }, "rescan: ", time.Hour)
	for i := range 3 {
		l.Printf("failure %d", i)
	}
	if len(lines) != 1 || lines[0] != "rescan: failure 0" {
		t.Fatalf("lines %q, want only the first failure", lines)
	}
	l.last = l.last.Add(-2 * time.Hour) // an interval later
	l.Printf("failure 3")
	if len(lines) != 2 || !strings.HasPrefix(lines[1], "rescan: failure 3 [2 similar messages not logged") {
		t.Fatalf("lines %q", lines)
	}
}

package coretest_test

import (
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/core/coretest"
	"github.com/dwellhttp/dwell/wait"
)

// A handler's tests, in process: Do for a request answered at once; a Client, Start and
// WaitParked for a long poll, which the test answers once the handler waits.
func ExampleClient() {
	t := &exampleT{} // in a test, its *testing.T
	defer t.cleanup()

	hello := func(c *core.Ctx) {
		c.SetHeader("Content-Type", "text/plain")
		c.WriteString("hello, " + c.Query("name"))
	}
	resp := coretest.Do(t, hello, coretest.NewRequest("GET", "/?name=dwell", nil))
	b, _ := io.ReadAll(resp.Body)
	fmt.Println(resp.StatusCode, resp.Header.Get("Content-Type"), string(b))

	topic := wait.NewTopic[string](16)
	poll := func(c *core.Ctx) {
		msgs, _, err := topic.Next(c, 0, time.Minute)
		if err != nil {
			c.SetStatus(204)
			return
		}
		c.WriteString(strings.Join(msgs, "\n"))
	}
	client := coretest.NewClient(t, poll, core.Options{})
	x := client.Start(coretest.NewRequest("GET", "/messages", nil))
	x.WaitParked() // the handler waits in Next: what is published now is the answer
	topic.Publish("first message")
	b, _ = io.ReadAll(x.Response().Body)
	fmt.Println(string(b))
	// Output:
	// 200 text/plain hello, dwell
	// first message
}

// exampleT stands in for the *testing.T that a test has and an example has not: it fails by
// panicking, and runs what was registered with Cleanup when the example calls cleanup.
type exampleT struct {
	testing.TB // nil: coretest calls only the methods below
	cleanups   []func()
}

func (t *exampleT) Helper()                        {}
func (t *exampleT) Cleanup(f func())               { t.cleanups = append(t.cleanups, f) }
func (t *exampleT) Fatal(args ...any)              { panic(fmt.Sprint(args...)) }
func (t *exampleT) Fatalf(format string, a ...any) { panic(fmt.Sprintf(format, a...)) }
func (t *exampleT) Errorf(format string, a ...any) { panic(fmt.Sprintf(format, a...)) }

func (t *exampleT) cleanup() {
	for i := len(t.cleanups) - 1; i >= 0; i-- {
		t.cleanups[i]()
	}
}

// Package browser tests the page of examples/chat in headless Chromium, as people use it: two
// users chatting, a burst of messages, a server that stops and comes back, sends that fail,
// impatient keys and bad input; and the page across a new history: the chat process killed
// (SIGKILL) and started again, the pages sending again after it (twenty of them listening),
// and examples/chatcluster's stream deleted and created again. It is a module of its own, for
// its dependencies on chromedp and, for chatcluster's test, on a NATS server run in the test
// process.
//
// Most tests serve the chat in the test process. Those that kill or share a server build the
// command (go build, with the go found on the PATH) and run it as a process of its own.
//
// The tests need Chromium (the Debian package chromium); they skip without it. The browser is
// found on the PATH, or named by the environment variable CHROME. `make test-browser` at the
// repository's root installs it when it is missing and runs them. The screenshots (two users
// chatting, a crash, ...) go to the directory named by DWELL_SCREENSHOTS, by default
// dwell-chat-browser under the system's temporary directory.
package browser

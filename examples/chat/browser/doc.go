// Package browser tests the page of examples/chat in headless Chromium, as people use it: two
// users chatting, a burst of messages, a server that stops and comes back, sends that fail,
// impatient keys and bad input. It is a module of its own, for its dependency on chromedp.
//
// The tests need Chromium (the Debian package chromium); they skip without it. The browser is
// found on the PATH, or named by the environment variable CHROME. `make test-browser` at the
// repository's root installs it when it is missing and runs them. The screenshot of two users
// chatting goes to the directory named by DWELL_SCREENSHOTS, by default dwell-chat-browser
// under the system's temporary directory.
package browser

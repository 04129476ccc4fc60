//go:build !linux || dwell_portable

package coretest_test

// portablePoller reports whether the tests run on the portable poller, which allocates.
const portablePoller = true

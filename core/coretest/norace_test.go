//go:build !race

package coretest_test

const raceEnabled = false

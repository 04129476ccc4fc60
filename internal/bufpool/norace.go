//go:build !race

package bufpool

const raceBuild = false

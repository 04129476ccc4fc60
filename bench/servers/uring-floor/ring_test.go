package main

import (
	"testing"
	"unsafe"
)

// TestLayout checks the structures shared with the kernel against linux/io_uring.h.
func TestLayout(t *testing.T) {
	for _, c := range []struct {
		what      string
		got, want uintptr
	}{
		{"sizeof(struct io_uring_sqe)", unsafe.Sizeof(sqe{}), 64},
		{"offsetof(io_uring_sqe, addr)", unsafe.Offsetof(sqe{}.addr), 16},
		{"offsetof(io_uring_sqe, msg_flags)", unsafe.Offsetof(sqe{}.opFlags), 28},
		{"offsetof(io_uring_sqe, user_data)", unsafe.Offsetof(sqe{}.userData), 32},
		{"offsetof(io_uring_sqe, buf_group)", unsafe.Offsetof(sqe{}.bufGroup), 40},
		{"sizeof(struct io_uring_cqe)", unsafe.Sizeof(cqe{}), 16},
		{"sizeof(struct io_uring_params)", unsafe.Sizeof(params{}), 120},
		{"sizeof(struct io_uring_buf)", unsafe.Sizeof(bufDesc{}), 16},
		{"offsetof(io_uring_buf_ring, tail)", unsafe.Offsetof(bufDesc{}.resv), 14},
	} {
		if c.got != c.want {
			t.Errorf("%s = %d, want %d", c.what, c.got, c.want)
		}
	}
}

package body

import "testing"

func TestSniff(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", "text/plain; charset=utf-8"},
		{"hello, world\n", "text/plain; charset=utf-8"},
		{"  <!DOCTYPE HTML><html>", "text/html; charset=utf-8"},
		{"<html>", "text/html; charset=utf-8"},
		{"<HTML lang=en>", "text/html; charset=utf-8"},
		{"<htmlx>", "text/plain; charset=utf-8"},
		{"<?xml version=\"1.0\"?>", "text/xml; charset=utf-8"},
		{"%PDF-1.7", "application/pdf"},
		{"\x89PNG\r\n\x1a\n\x00\x00", "image/png"},
		{"GIF89a", "image/gif"},
		{"\xff\xd8\xff\xe0", "image/jpeg"},
		{"RIFF\x00\x00\x00\x00WEBPVP8 ", "image/webp"},
		{"PK\x03\x04", "application/zip"},
		{"\x1f\x8b\x08\x00", "application/x-gzip"},
		{"\x00asm\x01", "application/wasm"},
		{"text\x00with a NUL", "application/octet-stream"},
		{"\x01\x02\x03", "application/octet-stream"},
	}
	for _, tc := range tests {
		if got := sniff([]byte(tc.in)); got != tc.want {
			t.Errorf("sniff(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestTypeByName(t *testing.T) {
	for name, want := range map[string]string{
		"a.html":     "text/html; charset=utf-8",
		"dir/b.css":  "text/css; charset=utf-8",
		"c.PNG":      "image/png",
		"README":     "",
		"archive.v1": "",
	} {
		if got := typeByName(name); got != want {
			t.Errorf("typeByName(%q) = %q, want %q", name, got, want)
		}
	}
}

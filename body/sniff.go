package body

import (
	"bytes"
	"mime"
	"path"
)

// sniffLen is how much content the type sniffer looks at, as in the WHATWG MIME Sniffing
// standard.
const sniffLen = 512

// typeByName returns the media type for a file name's extension, or "".
func typeByName(name string) string {
	ext := path.Ext(name)
	if ext == "" {
		return ""
	}
	return mime.TypeByExtension(ext)
}

// A signature is a prefix that identifies a media type.
type signature struct {
	prefix []byte
	ctype  string
}

// signatures is a small subset of the WHATWG MIME Sniffing table: the formats a static file
// server meets without an extension. Scriptable types (HTML, XML, SVG) are recognised only by
// the unambiguous starts below.
var signatures = []signature{
	{[]byte("%PDF-"), "application/pdf"},
	{[]byte("%!PS-Adobe-"), "application/postscript"},
	{[]byte("\x89PNG\r\n\x1a\n"), "image/png"},
	{[]byte("GIF87a"), "image/gif"},
	{[]byte("GIF89a"), "image/gif"},
	{[]byte("\xff\xd8\xff"), "image/jpeg"},
	{[]byte("BM"), "image/bmp"},
	{[]byte("\x00\x00\x01\x00"), "image/x-icon"},
	{[]byte("OggS\x00"), "application/ogg"},
	{[]byte("ID3"), "audio/mpeg"},
	{[]byte("\x1f\x8b\x08"), "application/x-gzip"},
	{[]byte("PK\x03\x04"), "application/zip"},
	{[]byte("Rar!\x1a\x07"), "application/x-rar-compressed"},
	{[]byte("\x00asm"), "application/wasm"},
	{[]byte("wOFF"), "font/woff"},
	{[]byte("wOF2"), "font/woff2"},
	{[]byte("\xef\xbb\xbf"), "text/plain; charset=utf-8"},
	{[]byte("\xfe\xff"), "text/plain; charset=utf-16be"},
	{[]byte("\xff\xfe"), "text/plain; charset=utf-16le"},
}

// htmlTags open an HTML document when followed by a space or '>' (case-insensitive).
var htmlTags = []string{"<!doctype html", "<html", "<head", "<body", "<script", "<title", "<!--", "<p", "<div", "<h1", "<table"}

// sniff guesses the media type of content from its first bytes: a known signature, HTML or
// XML, plain text when no byte is binary, and application/octet-stream otherwise.
func sniff(b []byte) string {
	b = b[:min(len(b), sniffLen)]
	for _, s := range signatures {
		if bytes.HasPrefix(b, s.prefix) {
			return s.ctype
		}
	}
	if len(b) >= 12 && string(b[:4]) == "RIFF" && string(b[8:12]) == "WEBP" {
		return "image/webp"
	}
	t := bytes.TrimLeft(b, "\t\n\x0c\r ")
	for _, tag := range htmlTags {
		if len(t) > len(tag) && bytes.EqualFold(t[:len(tag)], []byte(tag)) {
			if c := t[len(tag)]; c == ' ' || c == '>' {
				return "text/html; charset=utf-8"
			}
		}
	}
	if bytes.HasPrefix(t, []byte("<?xml")) {
		return "text/xml; charset=utf-8"
	}
	for _, c := range b {
		// The WHATWG binary data bytes: controls other than TAB, LF, FF, CR and ESC.
		if c <= 0x08 || c == 0x0b || 0x0e <= c && c <= 0x1a || 0x1c <= c && c <= 0x1f {
			return "application/octet-stream"
		}
	}
	return "text/plain; charset=utf-8"
}

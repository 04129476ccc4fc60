package interop

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// Autobahn's cases 6: a text message must be UTF-8 (§8.1), and one that is not fails the
// connection with 1007 — as soon as a byte makes the text impossible, not at the message's
// end ("fail fast", §8.1: "as soon as"); a valid one is echoed, whatever its fragments cut.

// kosme is "κόσμε", the test word of the UTF-8 decoder stress test that cases 6.5 to 6.21
// follow.
const kosme = "\xce\xba\xe1\xbd\xb9\xcf\x83\xce\xbc\xce\xb5"

// A utf8Vector is one payload of cases 6.5 to 6.23.
type utf8Vector struct {
	id    string
	text  string
	valid bool
}

// utf8Vectors are the payloads of cases 6.5 to 6.23, by the sections of the stress test.
func utf8Vectors() []utf8Vector {
	var vs []utf8Vector
	group := func(g string, valid bool, texts ...string) {
		for i, s := range texts {
			vs = append(vs, utf8Vector{"6." + g + "." + strconv.Itoa(i+1), s, valid})
		}
	}
	group("5", true, kosme)
	// 6.6: the prefixes of κόσμε, valid where they end between characters.
	for i := 1; i <= len(kosme); i++ {
		vs = append(vs, utf8Vector{"6.6." + strconv.Itoa(i), kosme[:i], utf8.ValidString(kosme[:i])})
	}
	group("7", true, "\x00", "\xc2\x80", "\xe0\xa0\x80", "\xf0\x90\x80\x80")                   // the first of each length
	group("8", false, "\xf8\x88\x80\x80\x80", "\xfc\x84\x80\x80\x80\x80")                      // 5 and 6 bytes
	group("9", true, "\x7f", "\xdf\xbf", "\xef\xbf\xbf", "\xf4\x8f\xbf\xbf")                   // the last of each length
	group("10", false, "\xf7\xbf\xbf\xbf", "\xfb\xbf\xbf\xbf\xbf", "\xfd\xbf\xbf\xbf\xbf\xbf") // past U+10FFFF
	group("11", true, "\xed\x9f\xbf", "\xee\x80\x80", "\xef\xbf\xbd", "\xf4\x8f\xbf\xbf")      // other boundaries
	vs = append(vs, utf8Vector{"6.11.5", "\xf4\x90\x80\x80", false})                           // U+110000
	// 6.12: unexpected continuation bytes.
	var allCont []byte
	for b := 0x80; b <= 0xbf; b++ {
		allCont = append(allCont, byte(b))
	}
	group("12", false, "\x80", "\xbf", "\x80\xbf", "\x80\xbf\x80", "\x80\xbf\x80\xbf", "\x80\xbf\x80\xbf\x80",
		"\x80\xbf\x80\xbf\x80\xbf", string(allCont))
	// 6.13: lonely start bytes, each followed by a space.
	lonely := func(from, to int) string {
		var b []byte
		for x := from; x <= to; x++ {
			b = append(b, byte(x), ' ')
		}
		return string(b)
	}
	group("13", false, lonely(0xc0, 0xdf), lonely(0xe0, 0xef), lonely(0xf0, 0xf7), lonely(0xf8, 0xfb), lonely(0xfc, 0xfd))
	// 6.14: sequences without their last continuation byte, and 6.15 all of them together.
	cut := []string{"\xc0", "\xe0\x80", "\xf0\x80\x80", "\xf8\x80\x80\x80", "\xfc\x80\x80\x80\x80",
		"\xdf", "\xef\xbf", "\xf7\xbf\xbf", "\xfb\xbf\xbf\xbf", "\xfd\xbf\xbf\xbf\xbf"}
	group("14", false, cut...)
	group("15", false, strings.Join(cut, ""))
	group("16", false, "\xfe", "\xff", "\xfe\xfe\xff\xff")                                                                             // impossible bytes
	group("17", false, "\xc0\xaf", "\xe0\x80\xaf", "\xf0\x80\x80\xaf", "\xf8\x80\x80\x80\xaf", "\xfc\x80\x80\x80\x80\xaf")             // overlong '/'
	group("18", false, "\xc1\xbf", "\xe0\x9f\xbf", "\xf0\x8f\xbf\xbf", "\xf8\x87\xbf\xbf\xbf", "\xfc\x83\xbf\xbf\xbf\xbf")             // longest overlong
	group("19", false, "\xc0\x80", "\xe0\x80\x80", "\xf0\x80\x80\x80", "\xf8\x80\x80\x80\x80", "\xfc\x80\x80\x80\x80\x80")             // overlong NUL
	group("20", false, "\xed\xa0\x80", "\xed\xad\xbf", "\xed\xae\x80", "\xed\xaf\xbf", "\xed\xb0\x80", "\xed\xbe\x80", "\xed\xbf\xbf") // surrogates
	group("21", false, "\xed\xa0\x80\xed\xb0\x80", "\xed\xa0\x80\xed\xbf\xbf", "\xed\xad\xbf\xed\xb0\x80", "\xed\xad\xbf\xed\xbf\xbf",
		"\xed\xae\x80\xed\xb0\x80", "\xed\xae\x80\xed\xbf\xbf", "\xed\xaf\xbf\xed\xb0\x80", "\xed\xaf\xbf\xed\xbf\xbf") // paired surrogates
	// 6.22: noncharacters, which are UTF-8 all the same: U+FFFE, U+FFFF and the last two of
	// each plane above.
	nonchars := []string{"\xef\xbf\xbe", "\xef\xbf\xbf"}
	for plane := rune(1); plane <= 16; plane++ {
		nonchars = append(nonchars, string(plane<<16|0xfffe), string(plane<<16|0xffff))
	}
	group("22", true, nonchars...)
	group("23", true, "\xef\xbf\xb9", "\xef\xbf\xba", "\xef\xbf\xbb", "\xef\xbf\xbc", "\xef\xbf\xbd") // specials, U+FFF9 to U+FFFD
	return vs
}

// utf8Cases are Autobahn's cases 6.
func utf8Cases() []confCase {
	hello := "Hello-\xc2\xb5@\xc3\x9f\xc3\xb6\xc3\xa4\xc3\xbc\xc3\xa0\xc3\xa1-UTF-8!!"
	cases := []confCase{
		{id: "6.1.1", what: "an empty text message", run: func(c *rawClient) {
			c.send(text(""))
			c.expectMessage(opText, nil)
			c.closeNormally()
		}},
		{id: "6.1.2", what: "a text message of 3 empty fragments", run: func(c *rawClient) {
			c.send(frag(opText, "", false), frag(opCont, "", false), frag(opCont, "", true))
			c.expectMessage(opText, nil)
			c.closeNormally()
		}},
		{id: "6.1.3", what: "a text message of 3 fragments, the first and last empty", run: func(c *rawClient) {
			c.send(frag(opText, "", false), frag(opCont, "middle frame payload", false), frag(opCont, "", true))
			c.expectMessage(opText, []byte("middle frame payload"))
			c.closeNormally()
		}},
		validText("6.2.1", "valid UTF-8 in one fragment", hello, len(hello)),
		validText("6.2.2", "valid UTF-8 in 2 fragments, cut between characters", hello, 13),
		validText("6.2.3", "valid UTF-8, a fragment per octet", hello, 1),
		validText("6.2.4", "κόσμε, a fragment per octet", kosme, 1),
		{id: "6.2.pings", what: "κόσμε a fragment per octet, a ping between each two: a character cut by a control frame", run: func(c *rawClient) {
			var frames []wsFrame
			for i, f := range fragments(kosme, 1) {
				if i > 0 {
					frames = append(frames, ping(strconv.Itoa(i)))
				}
				frames = append(frames, f)
			}
			c.send(frames...)
			for i := 1; i < len(kosme); i++ {
				c.expectPong(strconv.Itoa(i))
			}
			c.expectMessage(opText, []byte(kosme))
			c.closeNormally()
		}},
		invalidText("6.3.1", "invalid UTF-8 in one fragment", kosme+"\xed\xa0\x80edited", 0),
		invalidText("6.3.2", "invalid UTF-8, a fragment per octet", kosme+"\xed\xa0\x80edited", 1),
	}
	// 6.4: fail fast. The server must close before the part after the impossible byte is
	// sent: the suite sends it only after the close frame would have come, and waits for that.
	for i, parts := range [][3]string{
		{kosme, "\xf4\x90\x80\x80", "edited"},      // a code point past U+10FFFF, whole in part 2
		{kosme + "\xf4", "\x90", "\x80\x80edited"}, // the same, cut: part 2's one byte makes it impossible
	} {
		cases = append(cases,
			confCase{id: "6.4." + strconv.Itoa(i+1), what: "invalid UTF-8 in 3 fragments, failed at the second", run: func(c *rawClient) {
				c.sendEach(frag(opText, parts[0], false), frag(opCont, parts[1], false))
				c.expectClose(1007)
			}},
			confCase{id: "6.4." + strconv.Itoa(i+3), what: "invalid UTF-8 in one frame sent in chops, failed at the second", run: func(c *rawClient) {
				f := c.encode(text(parts[0] + parts[1] + parts[2]))[0]
				c.conn.SetNoDelay(true)
				part2 := len(f) - len(parts[2]) - len(parts[1])
				c.write(f[:part2])                      // the header and part 1
				c.write(f[part2 : part2+len(parts[1])]) // part 2; part 3 never goes
				c.expectClose(1007)
			}},
		)
	}
	for _, v := range utf8Vectors() {
		if v.valid {
			cases = append(cases, validText(v.id, "valid UTF-8", v.text, len(v.text)), validText(v.id+"/octets", "valid UTF-8, a fragment per octet", v.text, 1))
		} else {
			cases = append(cases, invalidText(v.id, "invalid UTF-8", v.text, 0), invalidText(v.id+"/octets", "invalid UTF-8, a fragment per octet", v.text, 1))
		}
	}
	return cases
}

// fragments cuts s into text fragments of n bytes (the last one shorter), at least one.
func fragments(s string, n int) []wsFrame {
	var frames []wsFrame
	for i := 0; i == 0 || i < len(s); i += n {
		op := opCont
		if i == 0 {
			op = opText
		}
		frames = append(frames, frag(op, s[i:min(i+n, len(s))], i+n >= len(s)))
	}
	return frames
}

// validText is a case that sends s in fragments of n bytes and expects its echo.
func validText(id, what, s string, n int) confCase {
	return confCase{id: id, what: what + ": " + strconv.Quote(s), run: func(c *rawClient) {
		c.send(fragments(s, max(n, 1))...)
		c.expectMessage(opText, []byte(s))
		c.closeNormally()
	}}
}

// invalidText is a case that sends s in fragments of n bytes (one fragment for 0) and expects
// the connection to fail with 1007.
func invalidText(id, what, s string, n int) confCase {
	if n == 0 {
		n = len(s)
	}
	return confCase{id: id, what: what + ": " + strconv.Quote(s), run: func(c *rawClient) {
		c.failsWith(1007, fragments(s, n)...)
	}}
}

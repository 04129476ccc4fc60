// dwell benchmark asset: 254 bytes of text served from an embed.FS, as a small script is.
// dwell benchmark asset: 254 bytes of text served from an embed.FS, as a small script is.
// dwell benchmark asset: 254 bytes of text served from an embed.FS, as

package peer

import "embed"

// Assets is the fs figure's file system: one 254-byte file, assets/app.js, embedded in every
// Go server's binary, so that what is measured is each server's serving of an fs.FS (ServeFS,
// http.FileServerFS, fasthttp.ServeFS), not a disk's.
//
//go:embed assets
var Assets embed.FS

// AssetPath is the path under /fs/ the fs figure asks for.
const AssetPath = "/fs/assets/app.js"

// Small inputs that declare huge work: each is a few bytes to a few MB on the wire and would cost
// gigabytes or minutes if a reader believed it. Built in code so the suite needs no corpus.
import { strToU8, zipSync } from 'fflate'

/** A GLB of the given JSON and binary chunk (each padded to 4 bytes as the format wants). */
export function glbOf(json: unknown, bin: Uint8Array = new Uint8Array(0)): Uint8Array {
  const text = strToU8(JSON.stringify(json))
  const jsonLength = Math.ceil(text.byteLength / 4) * 4
  const binLength = Math.ceil(bin.byteLength / 4) * 4
  const total = 12 + 8 + jsonLength + (binLength > 0 ? 8 + binLength : 0)
  const out = new Uint8Array(total)
  const view = new DataView(out.buffer)
  view.setUint32(0, 0x46546c67, true)
  view.setUint32(4, 2, true)
  view.setUint32(8, total, true)
  view.setUint32(12, jsonLength, true)
  view.setUint32(16, 0x4e4f534a, true)
  out.fill(0x20, 20, 20 + jsonLength)
  out.set(text, 20)
  if (binLength > 0) {
    view.setUint32(20 + jsonLength, binLength, true)
    view.setUint32(24 + jsonLength, 0x004e4942, true)
    out.set(bin, 28 + jsonLength)
  }
  return out
}

/**
 * A ~600-byte GLB whose position accessor is sparse with `count` entries in an 8-byte buffer: the
 * shape of the issue's bomb (a reader looping over the declared entries holds its thread for minutes).
 */
export function sparseAccessorGlb(count = 1_000_000_000): Uint8Array {
  return glbOf(
    {
      asset: { version: '2.0' },
      buffers: [{ byteLength: 52 }],
      bufferViews: [
        { buffer: 0, byteOffset: 0, byteLength: 8 },
        { buffer: 0, byteOffset: 8, byteLength: 8 },
        { buffer: 0, byteOffset: 16, byteLength: 36 },
      ],
      accessors: [
        {
          componentType: 5121,
          count,
          type: 'SCALAR',
          sparse: { count, indices: { bufferView: 0, componentType: 5125 }, values: { bufferView: 1 } },
        },
        { componentType: 5126, count: 3, type: 'VEC3', min: [0, 0, 0], max: [1, 1, 0], bufferView: 2 },
      ],
      meshes: [{ primitives: [{ attributes: { POSITION: 1, _WEIGHT: 0 } }] }],
      nodes: [{ mesh: 0 }],
      scenes: [{ nodes: [0] }],
    },
    sparseBin(),
  )
}

/** 8 bytes of sparse indices, 8 of values, then one triangle's positions. */
function sparseBin(): Uint8Array {
  const bin = new Uint8Array(52)
  new Float32Array(bin.buffer, 16, 9).set([0, 0, 0, 1, 0, 0, 0, 1, 0])
  return bin
}

/** A .gltf whose `extras` nests arrays `depth` deep: a recursive parser or walker overflows its stack. */
export function deepJsonGltf(depth = 100_000): Uint8Array {
  return strToU8(`{"asset":{"version":"2.0"},"extras":${'['.repeat(depth)}${']'.repeat(depth)}}`)
}

/** An OBJ with three vertices and one face of `corners` corners (about 6 bytes per corner). */
export function giantObjFace(corners = 2_000_000): Uint8Array {
  const parts = ['v 0 0 0\nv 1 0 0\nv 0 1 0\nf']
  for (let i = 0; i < corners; i++) parts.push(` ${(i % 3) + 1}`)
  parts.push('\n')
  return strToU8(parts.join(''))
}

/** A COLLADA file with the "billion laughs" entity chain: a few hundred bytes that expand to 10^levels strings. */
export function billionLaughsDae(levels = 9): Uint8Array {
  const entities = ['<!ENTITY lol0 "lol">']
  for (let i = 1; i <= levels; i++) entities.push(`<!ENTITY lol${i} "${`&lol${i - 1};`.repeat(10)}">`)
  return strToU8(
    `<?xml version="1.0" encoding="utf-8"?>\n<!DOCTYPE COLLADA [\n${entities.join('\n')}\n]>\n` +
      `<COLLADA xmlns="http://www.collada.org/2005/11/COLLADASchema" version="1.4.1"><asset><title>&lol${levels};</title></asset>` +
      '<library_visual_scenes><visual_scene id="s"><node id="n"/></visual_scene></library_visual_scenes><scene><instance_visual_scene url="#s"/></scene></COLLADA>\n',
  )
}

/** A COLLADA file with `count` empty elements: small on the wire once zipped, a large tree in a DOM parser. */
export function manyElementsDae(count = 5_000_000): Uint8Array {
  return strToU8(
    '<?xml version="1.0" encoding="utf-8"?>\n<COLLADA xmlns="http://www.collada.org/2005/11/COLLADASchema" version="1.4.1"><asset>' +
      '<a/>'.repeat(count) +
      '</asset><scene/></COLLADA>\n',
  )
}

/** A COLLADA float array declaring `count` values and holding three. */
export function hugeCountDae(count = 2_000_000_000): Uint8Array {
  return strToU8(
    '<?xml version="1.0" encoding="utf-8"?>\n<COLLADA xmlns="http://www.collada.org/2005/11/COLLADASchema" version="1.4.1">' +
      `<library_geometries><geometry id="g"><mesh><source id="p"><float_array id="pa" count="${count}">0 0 0</float_array></source></mesh></geometry></library_geometries></COLLADA>\n`,
  )
}

/**
 * A one-triangle COLLADA file whose arrays hold `floats` and `indices` as written. assimp 5.2 spins
 * for tens of seconds on a stray "inf", "1e308" or "10:" in them (found by the fuzz corpus).
 */
export function daeWithArrays(floats = '0 0 0 1 0 0 0 1 0', indices = '0 1 2'): Uint8Array {
  return strToU8(
    '<?xml version="1.0" encoding="utf-8"?>\n<COLLADA xmlns="http://www.collada.org/2005/11/COLLADASchema" version="1.4.1">' +
      '<library_geometries><geometry id="g"><mesh><source id="p">' +
      `<float_array id="pa" count="9">${floats}</float_array>` +
      '<technique_common><accessor source="#pa" count="3" stride="3"><param name="X" type="float"/><param name="Y" type="float"/><param name="Z" type="float"/></accessor></technique_common></source>' +
      '<vertices id="v"><input semantic="POSITION" source="#p"/></vertices>' +
      `<triangles count="1"><input semantic="VERTEX" source="#v" offset="0"/><p>${indices}</p></triangles>` +
      '</mesh></geometry></library_geometries>' +
      '<library_visual_scenes><visual_scene id="s"><node id="n"><instance_geometry url="#g"/></node></visual_scene></library_visual_scenes>' +
      '<scene><instance_visual_scene url="#s"/></scene></COLLADA>\n',
  )
}

/** An ASCII FBX whose vertex array declares `count` values and holds three. */
export function hugeCountFbx(count = 2_000_000_000): Uint8Array {
  return strToU8(
    `; FBX 7.3.0 project file\nFBXHeaderExtension:  {\n FBXVersion: 7300\n}\nObjects:  {\n Geometry: 1, "Geometry::", "Mesh" {\n  Vertices: *${count} {\n   a: 0,0,0\n  }\n }\n}\n`,
  )
}

/** A binary PLY header declaring `count` vertices, with no body. */
export function hugeCountPly(count = 4_000_000_000): Uint8Array {
  return strToU8(
    `ply\nformat binary_little_endian 1.0\nelement vertex ${count}\nproperty float x\nproperty float y\nproperty float z\nend_header\n`,
  )
}

/** A binary STL of 134 bytes whose header declares `count` triangles. */
export function hugeCountStl(count = 2_000_000_000): Uint8Array {
  const stl = new Uint8Array(84 + 50)
  new DataView(stl.buffer).setUint32(80, count, true)
  return stl
}

/** A baseline JPEG whose frame header declares width × height (JPEG's largest is 65535²), cut after its header. */
export function jpegDeclaring(width = 65_535, height = 65_535): Uint8Array {
  const sof = [
    0xff,
    0xc0,
    0x00,
    0x11,
    0x08,
    height >> 8,
    height & 0xff,
    width >> 8,
    width & 0xff,
    0x03,
    0x01,
    0x22,
    0x00,
    0x02,
    0x11,
    0x01,
    0x03,
    0x11,
    0x01,
  ]
  return new Uint8Array([
    0xff,
    0xd8,
    0xff,
    0xe0,
    0x00,
    0x10,
    0x4a,
    0x46,
    0x49,
    0x46,
    0x00,
    0x01,
    0x01,
    0x00,
    0x00,
    0x01,
    0x00,
    0x01,
    0x00,
    0x00,
    ...sof,
    0xff,
    0xd9,
  ])
}

/** An extended WebP (VP8X) whose canvas declares width × height (WebP's largest is 16384²), with no image data. */
export function webpDeclaring(width = 16_384, height = 16_384): Uint8Array {
  const out = new Uint8Array(30)
  const view = new DataView(out.buffer)
  out.set(strToU8('RIFF'), 0)
  view.setUint32(4, 22, true)
  out.set(strToU8('WEBPVP8X'), 8)
  view.setUint32(16, 10, true)
  const uint24 = (at: number, value: number) => out.set([value & 0xff, (value >> 8) & 0xff, (value >> 16) & 0xff], at)
  uint24(24, width - 1)
  uint24(27, height - 1)
  return out
}

/** A GLB whose one texture is `image` (a bomb's header), used by a material of a one-triangle mesh. */
export function glbWithImage(image: Uint8Array, mimeType: string): Uint8Array {
  const geometry = new Float32Array([0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 1])
  const geometryBytes = new Uint8Array(geometry.buffer)
  const imageOffset = geometryBytes.byteLength
  const bin = new Uint8Array(Math.ceil((imageOffset + image.byteLength) / 4) * 4)
  bin.set(geometryBytes)
  bin.set(image, imageOffset)
  return glbOf(
    {
      asset: { version: '2.0' },
      buffers: [{ byteLength: bin.byteLength }],
      bufferViews: [
        { buffer: 0, byteOffset: 0, byteLength: 36 },
        { buffer: 0, byteOffset: 36, byteLength: 24 },
        { buffer: 0, byteOffset: imageOffset, byteLength: image.byteLength },
      ],
      accessors: [
        { bufferView: 0, componentType: 5126, count: 3, type: 'VEC3', min: [0, 0, 0], max: [1, 1, 0] },
        { bufferView: 1, componentType: 5126, count: 3, type: 'VEC2' },
      ],
      images: [{ bufferView: 2, mimeType }],
      textures: [{ source: 0 }],
      materials: [{ pbrMetallicRoughness: { baseColorTexture: { index: 0 } } }],
      meshes: [{ primitives: [{ attributes: { POSITION: 0, TEXCOORD_0: 1 }, material: 0 }] }],
      nodes: [{ mesh: 0 }],
      scenes: [{ nodes: [0] }],
      scene: 0,
    },
    bin,
  )
}

/** `zip` (one entry) with its headers patched to declare `declared` uncompressed bytes, as a hostile archive would. */
function declaringSize(zip: Uint8Array, declared: number): Uint8Array {
  const view = new DataView(zip.buffer, zip.byteOffset, zip.byteLength)
  let eocd = zip.byteLength - 22
  while (view.getUint32(eocd, true) !== 0x06054b50) eocd--
  const central = view.getUint32(eocd + 16, true)
  view.setUint32(central + 24, declared, true) // central directory: uncompressed size
  view.setUint32(22, declared, true) // local header: uncompressed size
  return zip
}

/**
 * A zip whose headers declare `declared` bytes for its one entry (an OBJ of a few bytes): a reader
 * that allocates by the declared size is exhausted before it inflates anything.
 */
export function zipDeclaring(declared = 0xfffffff0): Uint8Array {
  return declaringSize(zipSync({ 'model.obj': [strToU8('v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n'), { level: 6 }] }), declared)
}

/**
 * A zip of one entry that inflates to `bytes` zero bytes (1000:1 and more) while its headers
 * declare 10: only a bound on what inflating produces stops it.
 */
export function zipInflatingTo(bytes = 64 * 1024 * 1024): Uint8Array {
  return declaringSize(zipSync({ 'model.obj': [new Uint8Array(bytes), { level: 9 }] }), 10)
}

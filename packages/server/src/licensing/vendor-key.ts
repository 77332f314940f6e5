/**
 * Mos's own vendor public key (Ed25519, SPKI DER in base64). Keys sold for Mos are signed with its
 * private half, which is kept offline by the vendor and never in this repository. Deployments that
 * issue their own keys set `SERVICE__LICENSE__PUBLIC_KEY` instead.
 */
export const MOS_VENDOR_PUBLIC_KEY = 'MCowBQYDK2VwAyEArDga+H/krFpvtcpYo91bWdbb343JCEhV9ABTLY4ywag='

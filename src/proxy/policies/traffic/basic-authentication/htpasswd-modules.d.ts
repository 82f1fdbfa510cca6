// The two Apache password-hash packages ship no types.
declare module 'apache-md5' {
  /** `$apr1$<salt>$<hash>` of `password`; `salt` may be a whole existing hash (its salt is used). */
  export default function apacheMd5(password: string, salt?: string): string;
}

declare module 'apache-crypt' {
  /** Traditional DES crypt(3) of `password`; `salt` may be a whole existing 13-character hash. */
  export default function apacheCrypt(password: string, salt?: string): string;
}

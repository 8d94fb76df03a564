import { luaScript } from '../../redis/lua-script.js';

/** KEYS. Its KEYS, ARGV and reply: the header of lua/record-call-8.lua. */
export const RECORD_CALL = luaScript(new URL('./lua/record-call-8.lua', import.meta.url));

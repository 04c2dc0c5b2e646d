import { describe, expect, it } from 'vitest';
import { MEDIA_URL_MAX, mediaUrlProblem } from './media-url.js';

const PRIVATE = 'must not point to a private, loopback or link-local address';

describe('media URL', () => {
  it.each([
    'https://cdn.example.com/a.jpg',
    'https://CDN.Example.com:8443/path/a%20b.mp4?v=2#t=10',
    'https://93.184.216.34/a.jpg',
    'https://[2606:4700:4700::1111]/a.mp3',
    'https://[::ffff:93.184.216.34]/a.jpg',
    'https://bücher.example/cover.png',
  ])('accepts %s', (url) => {
    expect(mediaUrlProblem(url)).toBeNull();
  });

  it.each([
    ['http://cdn.example.com/a.jpg', 'must use https'],
    ['ftp://cdn.example.com/a.jpg', 'must use https'],
    ['javascript:alert(1)', 'must use https'],
    ['data:image/png;base64,AAAA', 'must use https'],
    ['HTTPS://user:pass@cdn.example.com/a.jpg', 'must not carry a user name or password'],
    ['https://user@cdn.example.com/a.jpg', 'must not carry a user name or password'],
    ['https://:secret@cdn.example.com/a.jpg', 'must not carry a user name or password'],
    ['https://localhost/a.jpg', 'must not point to a local network name'],
    ['https://LOCALHOST./a.jpg', 'must not point to a local network name'],
    ['https://foo.localhost/a.jpg', 'must not point to a local network name'],
    ['https://printer.local/a.jpg', 'must not point to a local network name'],
    ['https://metadata.google.internal/a.jpg', 'must not point to a local network name'],
    ['https://router.home.arpa/a.jpg', 'must not point to a local network name'],
    ['https://intranet/a.jpg', 'must use a full domain name, like cdn.example.com'],
    ['https://intranet./a.jpg', 'must use a full domain name, like cdn.example.com'],
  ])('refuses %s: %s', (url, problem) => {
    expect(mediaUrlProblem(url)).toBe(problem);
  });

  // First and last address of each range, and the addresses just outside it on either side.
  it.each([
    ['0.0.0.0/8', ['0.0.0.0', '0.255.255.255'], ['1.0.0.0']],
    ['10.0.0.0/8', ['10.0.0.0', '10.255.255.255'], ['9.255.255.255', '11.0.0.0']],
    ['100.64.0.0/10', ['100.64.0.0', '100.127.255.255'], ['100.63.255.255', '100.128.0.0']],
    ['127.0.0.0/8', ['127.0.0.0', '127.255.255.255'], ['126.255.255.255', '128.0.0.0']],
    ['169.254.0.0/16', ['169.254.0.0', '169.254.169.254', '169.254.255.255'], ['169.253.255.255', '169.255.0.0']],
    ['172.16.0.0/12', ['172.16.0.0', '172.31.255.255'], ['172.15.255.255', '172.32.0.0']],
    ['192.0.0.0/24', ['192.0.0.0', '192.0.0.255'], ['191.255.255.255', '192.0.1.0']],
    ['192.168.0.0/16', ['192.168.0.0', '192.168.255.255'], ['192.167.255.255', '192.169.0.0']],
    ['198.18.0.0/15', ['198.18.0.0', '198.19.255.255'], ['198.17.255.255', '198.20.0.0']],
    ['224.0.0.0/4', ['224.0.0.0', '239.255.255.255'], ['223.255.255.255']],
    ['240.0.0.0/4', ['240.0.0.0', '255.255.255.255'], []],
  ])('refuses every address in %s, also IPv4-mapped, and accepts its neighbours', (_range, inside, outside) => {
    for (const address of inside) {
      expect(mediaUrlProblem(`https://${address}/a.jpg`), address).toBe(PRIVATE);
      expect(mediaUrlProblem(`https://[::ffff:${address}]/a.jpg`), address).toBe(PRIVATE);
    }
    for (const address of outside) {
      expect(mediaUrlProblem(`https://${address}/a.jpg`), address).toBeNull();
      expect(mediaUrlProblem(`https://[::ffff:${address}]/a.jpg`), address).toBeNull();
    }
  });

  it.each(['https://2130706433/', 'https://0x7f.1/', 'https://0x7f000001/', 'https://0177.0.0.1/', 'https://127.1/', 'https://127.0.0.1./', 'https://%31%32%37.0.0.1/', 'https://0/'])(
    'refuses %s, which the URL parser reads as a loopback or zero address',
    (url) => {
      expect(mediaUrlProblem(url)).toBe(PRIVATE);
    },
  );

  it.each([
    'https://[::]/',
    'https://[::1]/',
    'https://[::ffff:0:0]/',
    'https://[0:0:0:0:0:0:0:1]/',
    'https://[fe80::1]/',
    'https://[febf::1]/',
    'https://[fc00::1]/',
    'https://[fdff:ffff::1]/',
    'https://[ff02::1]/',
    'https://[::ffff:127.0.0.1]/',
    'https://[::ffff:7f00:1]/',
    'https://[::ffff:a9fe:a9fe]/',
    'https://[::127.0.0.1]/',
  ])('refuses the IPv6 address %s', (url) => {
    expect(mediaUrlProblem(url)).toBe(PRIVATE);
  });

  it('accepts a URL of exactly the maximum length and refuses one character more', () => {
    const base = 'https://cdn.example.com/';
    const longest = base + 'a'.repeat(MEDIA_URL_MAX - base.length);
    expect(mediaUrlProblem(longest)).toBeNull();
    expect(mediaUrlProblem(`${longest}a`)).toBe(`must be at most ${MEDIA_URL_MAX} characters long`);
  });

  // The stored URL is the parsed one, which the answers promise to keep within the maximum.
  it('measures the URL as stored: percent-encoded, where one character can take twelve', () => {
    const base = 'https://cdn.example.com/';
    const fits = base + 'é'.repeat(Math.floor((MEDIA_URL_MAX - base.length) / 6)); // 'é' is '%C3%A9'
    expect(new URL(fits).href.length).toBeLessThanOrEqual(MEDIA_URL_MAX);
    expect(mediaUrlProblem(fits)).toBeNull();
    expect(mediaUrlProblem(`${fits}é`)).toBe(`must be at most ${MEDIA_URL_MAX} characters long once percent-encoded`);
    expect(mediaUrlProblem(base + '😀'.repeat(200))).toBe(`must be at most ${MEDIA_URL_MAX} characters long once percent-encoded`);
  });

  it.each(['', 'not a url', 'cdn.example.com/a.jpg', '/uploads/a.jpg', 'https://', 'https://exa mple.com/', 'https://[::1/', 'https://1.2.3.4.5/'])(
    'refuses %j as not a web address',
    (url) => {
      expect(mediaUrlProblem(url)).toBe('must be a complete web address, like https://cdn.example.com/photo.jpg');
    },
  );
});

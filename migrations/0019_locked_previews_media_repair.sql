-- Locked means locked (issue 26): previews that gave posts away, HTML without a bound, and
-- media addresses longer than the API answers.
--
-- 1. Automatic previews. They used to be the first ~140 characters of any post, so a post of
-- 40 to 140 characters reached members without access whole. The rule now (content.ts
-- previewOf): at most the first third of the text and 140 characters, none under 60. It
-- needs the markdown parser, which SQL does not have, so this file cannot compute it: it
-- clears every stored automatic preview and flags it stale. Reads compute a stale post's
-- preview from its content (paywall.ts teaserOf) and a start-up pass writes it back in
-- batches (posts.service refreshStalePreviews; several nodes at once skip each other's rows),
-- so no path serves an old preview from the moment this commits. From then on the flag
-- defaults to true: the current code (and the feed bench's seeder) writes false with a
-- preview it computed, while a server still running the code before this file (a rolling
-- deploy) writes neither, and its posts are treated as stale, never served by the old rule.
alter table posts alter column preview_auto drop not null;
alter table posts add column preview_auto_stale boolean not null default false;
update posts set preview_auto = null, preview_auto_stale = true;
alter table posts alter column preview_auto_stale set default true;
-- What the start-up pass looks for: empty once it has run.
create index posts_preview_auto_stale_idx on posts (id) where preview_auto_stale;

-- 2. Rendered HTML. A post's HTML is now refused above 64 KB (content.ts CONTENT_HTML_MAX);
-- one stored before weighed up to several MB (reference links to one long address). Its
-- content cannot be re-rendered here, and a bounded rendering of it would not be what its
-- creator wrote anyway, so it is shown as its plain text: every character that means
-- something in HTML escaped, line breaks kept. That stays well under 64 KB (content holds at
-- most 4,000 counted characters in at most 16,000 UTF-16 units, and none escapes to more than
-- 12 bytes), and its creator sees the post as members do and can edit it.
update posts
set content_html = '<p>' || replace(replace(replace(replace(replace(content, '&', '&amp;'), '<', '&lt;'), '>', '&gt;'), '"', '&quot;'), E'\n', E'<br>\n') || '</p>'
where octet_length(content_html) > 65536;

-- 3. Media addresses (issue 26, item 8). Posts stored before the 2,048-character bound
-- (media-url.ts MEDIA_URL_MAX) may hold longer URLs, which no answer may carry (the API
-- documents at most 2,048 characters and https://). Repairing means dropping such an
-- attachment from the post's media, keeping the others in their order: an address that long
-- is one no app loads reliably, and shortening it would point somewhere else. `length`
-- counts code points, as the documented maxLength does.
update posts p
set media = coalesce((select jsonb_agg(m.item order by m.n)
                      from jsonb_array_elements(p.media) with ordinality as m(item, n)
                      where length(m.item ->> 'url') <= 2048 and m.item ->> 'url' like 'https://%'), '[]'::jsonb)
where exists (select 1 from jsonb_array_elements(p.media) as m(item)
              where length(m.item ->> 'url') > 2048 or m.item ->> 'url' not like 'https://%' or m.item ->> 'url' is null);

-- What a prediction record's insert costs Postgres, by table shape and statement shape (issue 49 item 8;
-- bench/serve/notebook/2026-11-29-monitoring-hotpath.md). In a scratch database, 50,000 rows per statement:
--   psql postgres://postgres@127.0.0.1:5432/postgres -c "create database mh_scratch"
--   psql -q postgres://postgres@127.0.0.1:5432/mh_scratch -f bench/serve/monitoring-insert-shapes.sql
-- then run the \timing blocks below (each part after "-- run:") two or three times and read the Time lines.
create extension if not exists pgcrypto;
create table models(id uuid primary key, experiment_uuid uuid);
insert into models select gen_random_uuid(), gen_random_uuid() from generate_series(1,20);
-- main's table (primary key, (experiment, at) index, foreign key to models)
create table pr_cur (experiment_uuid uuid not null, request_id text not null, model_id uuid not null references models(id) on delete cascade,
  at timestamptz not null, key_id uuid, scores real[] not null, decision integer, label integer, label_at timestamptz,
  primary key(experiment_uuid, request_id));
create index on pr_cur(experiment_uuid, at);
-- the same without the foreign key (this change), with the key only, with nothing
create table pr_nofk (like pr_cur including all);
create table pr_pkonly (experiment_uuid uuid not null, request_id text not null, model_id uuid not null, at timestamptz not null,
  key_id uuid, scores real[] not null, decision integer, label integer, label_at timestamptz, primary key(experiment_uuid, request_id));
create table pr_none (experiment_uuid uuid not null, request_id text not null, model_id uuid not null, at timestamptz not null,
  key_id uuid, scores real[] not null, decision integer, label integer, label_at timestamptz);
create unlogged table src as select (select experiment_uuid from models limit 1) e, gen_random_uuid()::text rid,
  (select id from models limit 1) m, now() + i * interval '1 ms' t, gen_random_uuid() k, array[random(), random()]::real[] s,
  (random()>0.5)::int d from generate_series(1,50000) i;
-- the same ids in time order (a UUID version 7's layout: the time in ms first)
create unlogged table src7 as select e, lpad(to_hex((extract(epoch from clock_timestamp())*1000)::bigint + n), 12, '0') || '-7' || substr(rid, 16) rid,
  m, t, k, s, d from (select row_number() over () n, * from src) x;
-- the flush's array literals, 1,000 rows a chunk: main's (scores as a text[] of nested literals) and this change's
-- (one real[] per score position)
create unlogged table lits as select n/1000 c, array_agg(rid)::text ids, array_agg(extract(epoch from t))::text ats, array_agg(k)::text ks,
  array_agg(s::text)::text ss, array_agg(d)::text ds, array_agg(s[1] order by n)::text s1, array_agg(s[2] order by n)::text s2
  from (select row_number() over () n, * from src) x group by n/1000;

-- run: table shapes
\timing on
truncate pr_cur, pr_nofk, pr_pkonly, pr_none;
insert into pr_cur select *, null, null from src;
insert into pr_nofk select *, null, null from src;
insert into pr_pkonly select *, null, null from src;
insert into pr_none select *, null, null from src;

-- run: statement shapes (no index, so that only the parse differs)
truncate pr_none;
do $$ declare r record; begin for r in select * from lits loop
 insert into pr_none select (select experiment_uuid from models limit 1), x.request_id, (select id from models limit 1), to_timestamp(x.at), x.key_id, x.scores::real[], x.decision
 from unnest(r.ids::text[], r.ats::float8[], r.ks::uuid[], r.ss::text[], r.ds::int[]) as x(request_id, at, key_id, scores, decision);
end loop; end $$;
truncate pr_none;
do $$ declare r record; begin for r in select * from lits loop
 insert into pr_none select (select experiment_uuid from models limit 1), x.request_id, (select id from models limit 1), to_timestamp(x.at), x.key_id, array[x.a, x.b], x.decision
 from unnest(r.ids::text[], r.ats::float8[], r.ks::uuid[], r.s1::real[], r.s2::real[], r.ds::int[]) as x(request_id, at, key_id, a, b, decision);
end loop; end $$;
truncate pr_none;
\copy (select e, rid, m, t, k, s, d, null::int, null::timestamptz from src) to '/tmp/mh_copy.bin' (format binary)
\copy pr_none from '/tmp/mh_copy.bin' (format binary)

-- run: random ids against ids in time order, into a key that already holds 150,000
truncate pr_pkonly;
insert into pr_pkonly select e, rid||'z', m, t, k, s, d, null, null from src;
insert into pr_pkonly select e, rid||'y', m, t, k, s, d, null, null from src;
insert into pr_pkonly select e, rid||'x', m, t, k, s, d, null, null from src;
insert into pr_pkonly select e, rid||'r', m, t, k, s, d, null, null from src;
insert into pr_pkonly select e, rid||'s', m, t, k, s, d, null, null from src7;

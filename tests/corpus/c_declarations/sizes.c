/* A protocol's cache made by the size its struct proto holds. */
struct inner { int a; };
struct outer { struct inner in; int b; };
struct wrap { union { struct outer o; struct inner i; }; long c; };
static struct inet_frags frags;
int proto_register(struct proto *prot, int alloc_slab)
{
	prot->slab = kmem_cache_create_usercopy(prot->name,
				prot->obj_size, 0,
				SLAB_HWCACHE_ALIGN | SLAB_ACCOUNT | prot->slab_flags,
				prot->useroffset, prot->usersize, NULL);
	sk = kmalloc(prot->obj_size, GFP_KERNEL);
	f->frags_cachep = kmem_cache_create(f->frags_cache_name, f->qsize, 0, 0, NULL);
}
/* This proto struct describes the interface. */
struct proto inner_prot __read_mostly = {
	.name = "INNER",
	.obj_size = sizeof(struct inner),
};
static struct cache_info infos[] = {
	{ .cache = &a, .size = sizeof(struct outer), },
	{ .cache = &b, .size = sizeof(struct wrap) + 8, },
};
void init(struct inet_frags *f)
{
	f->qsize = sizeof(struct outer);
	frags.qsize = sizeof(struct wrap);
}

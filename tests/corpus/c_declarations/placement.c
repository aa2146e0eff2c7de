/* Where objects of inner and outer live: slab caches, kmalloc, per-CPU, statics, embedding. */
DEFINE_PER_CPU_SHARED_ALIGNED(struct inner, inners);
static struct outer boot_outer ____cacheline_aligned = { };
struct inner init_inner = {
};
struct holder {
	struct inner __rcu *p;
	struct inner in;
	struct outer arr[2];
};
void __init caches(void)
{
	inner_cache = kmem_cache_create("inner", sizeof(struct inner), 0,
					SLAB_HWCACHE_ALIGN | SLAB_PANIC, NULL);
	outer_cache = kmem_cache_create("outer", sizeof(struct outer), &args,
					SLAB_TYPESAFE_BY_RCU);
	x = KMEM_CACHE(inner, SLAB_PANIC);
}
static struct outer *make(int n)
{
	struct outer *o = kzalloc(sizeof(*o), GFP_KERNEL);
	struct inner *i;

	i = kzalloc(struct_size(i, items, n), GFP_KERNEL);
	o->in = kcalloc(n, sizeof(struct inner), GFP_KERNEL);
	return devm_kzalloc(dev, sizeof(struct outer), GFP_KERNEL) ?: vzalloc(sizeof(struct inner));
}
